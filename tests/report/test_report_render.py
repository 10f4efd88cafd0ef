"""report.json / report.md / report.html, and the HTML opened in headless Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from report_fixtures import questions, traces

from groundeval.report.render import write_reports
from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.model import RunReport
from groundeval.scoring.score import score

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--enable-logging=stderr",
    "--v=0",
]


def _written(tmp_path, good=False):
    qs, ts = questions(), traces(good)
    scores = [score(q, t) for q, t in zip(qs, ts)]
    report = aggregate(qs, ts, scores, seed=7, bootstrap_samples=100)
    return report, scores, write_reports(report, tmp_path, questions=qs, traces=ts, scores=scores)


def test_reports_are_written_and_deterministic(tmp_path):
    report, scores, paths = _written(tmp_path / "a")
    _, _, again = _written(tmp_path / "b")
    for name in ("report.json", "report.md", "report.html"):
        assert paths[name].read_bytes() == again[name].read_bytes()
    loaded = RunReport.model_validate_json(paths["report.json"].read_text())
    assert loaded == report
    md = paths["report.md"].read_text()
    assert f"| all | 5 | {report.overall.means['s_adj']:.3f} |" in md
    assert "state_invalid_correct" in md  # the unproven silence 'no' is listed


def test_html_is_self_contained_and_escaped(tmp_path):
    _, _, paths = _written(tmp_path)
    html = paths["report.html"].read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)" in html
    assert "narration for p3" in html


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_html_opens_in_headless_chromium(tmp_path):
    report, scores, paths = _written(tmp_path)
    url = paths["report.html"].resolve().as_uri()
    dump = subprocess.run([CHROMIUM, *FLAGS, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    console = [line for line in dump.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    dom = dump.stdout
    assert 'id="headline"' in dom and f"{report.overall.run_s_adj:.3f}" in dom
    for track in ("perspective", "counterfactual", "silence"):
        assert f'data-track="{track}"' in dom
    assert f'id="f-count">{len(scores)} shown' in dom  # the filter script ran
    # the filter by failure class, through the page's own script (?class=...)
    wrong = sum(s.failure_class == "state_invalid_correct" for s in scores)
    filtered = subprocess.run(
        [CHROMIUM, *FLAGS, "--dump-dom", url + "?class=state_invalid_correct"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert f'id="f-count">{wrong} shown' in filtered and 0 < wrong < len(scores)
    shot = tmp_path / "shot.png"
    subprocess.run(
        [CHROMIUM, *FLAGS, f"--screenshot={shot}", "--window-size=1280,1400", url], capture_output=True, timeout=120
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_report_json_matches_registered_schema(tmp_path):
    import jsonschema

    from groundeval.contract.schemas import schema_for

    _, _, paths = _written(tmp_path)
    jsonschema.validate(json.loads(paths["report.json"].read_text()), schema_for("report"))
