"""``groundeval view`` (issue 32 item 6): one static page over every run in a folder — filter,
open a run's report, compare two runs per question with the calls that differ — checked in
headless Chromium at phone and desktop width (no sideways page scroll; a table that scrolls says
so), plus its bytes: deterministic, and an agent's text can never become markup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_chromium import CHROMIUM

from cli_run import cli

from groundeval.cli.main import main
from groundeval.report.view import build, run_folders


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    main(["eval", "tiny", "--agent", "oracle", "--agent", "keyword", "--out", str(root), "-q", "--limit", "8"])
    return root


def _scores(folder: Path) -> dict[str, dict]:
    return {s["question_id"]: s for s in map(json.loads, (folder / "scores.jsonl").read_text().splitlines())}


def _calls(folder: Path) -> dict[str, list]:
    out = {}
    for t in map(json.loads, (folder / "traces.jsonl").read_text().splitlines()):
        out[t["question_id"]] = [
            (c["tool"], json.dumps(c["arguments"], sort_keys=True), c["status"]) for c in t["calls"]
        ]
    return out


def _differing(runs: Path) -> set[str]:
    a, b = _scores(runs / "oracle"), _scores(runs / "keyword")
    ca, cb = _calls(runs / "oracle"), _calls(runs / "keyword")
    return {
        q
        for q in a
        if a[q]["s_adj"] != b[q]["s_adj"] or a[q]["failure_class"] != b[q]["failure_class"] or ca[q] != cb[q]
    }


def test_view_writes_one_deterministic_page_listing_every_run(runs, capsys):
    assert [p.name for p in run_folders(runs)] == ["keyword", "oracle"]
    code, out, _ = cli(capsys, "view", str(runs))
    assert code == 0 and f"view: {runs / 'index.html'}" in out
    first = (runs / "index.html").read_bytes()
    assert build(runs).encode() == first  # same folder, same bytes
    data = json.loads(first.split(b'id="data">')[1].split(b"</script>")[0])
    assert [r["path"] for r in data["runs"]] == ["keyword", "oracle"]
    assert [r["report"] for r in data["runs"]] == ["keyword/report.html", "oracle/report.html"]
    oracle = data["runs"][1]
    assert oracle["run_s_adj"] == json.loads((runs / "oracle" / "report.json").read_text())["overall"]["run_s_adj"]
    assert set(oracle["questions"]) == set(_scores(runs / "oracle"))


def test_agent_text_cannot_close_the_script(runs, tmp_path):
    import shutil

    folder = tmp_path / "evil"
    shutil.copytree(runs / "keyword", folder / "keyword")
    traces = folder / "keyword" / "traces.jsonl"
    lines = traces.read_text().splitlines()
    t = json.loads(lines[0])
    t["calls"].insert(
        0,
        {
            "index": 0,
            "tool": "search_artifacts",
            "arguments": {"query": "</script><img src=x onerror=alert(1)>"},
            "status": "ok",
            "result_ids": [],
            "flags": [],
            "error": None,
        },
    )
    for i, c in enumerate(t["calls"]):
        c["index"] = i
    traces.write_text("\n".join([json.dumps(t), *lines[1:]]) + "\n")
    page = build(folder)
    assert page.count("</script>") == 2  # the data's and the code's own, nothing from the agent
    assert "<img src=x" not in page and "\\u003c/script>\\u003cimg" in page


def test_a_folder_without_runs_exits_2_and_a_foreign_report_is_left_out_with_a_note(runs, tmp_path, capsys):
    code, _, err = cli(capsys, "view", str(tmp_path))
    assert code == 2 and "holds no run" in err and "Traceback" not in err
    import shutil

    shutil.copytree(runs / "oracle", tmp_path / "oracle")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "report.json").write_text('{"kind": "not a run report"}')
    code, out, err = cli(capsys, "view", str(tmp_path))
    assert code == 0 and "note: left out:" in err and "other/report.json" in err
    data = json.loads((tmp_path / "index.html").read_text().split('id="data">')[1].split("</script>")[0])
    assert [r["path"] for r in data["runs"]] == ["oracle"]


MEASURE = """JSON.stringify({
  innerWidth: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  rows: document.querySelectorAll('#runs tbody tr').length,
  hint: getComputedStyle(document.querySelector('#runs-wrap .hint')).display,
  questions: Array.from(document.querySelectorAll('#diff .q')).map(e => e.dataset.question),
  only: document.querySelectorAll('#diff .call.only').length,
  summary: document.getElementById('diff-summary').textContent,
  links: Array.from(document.querySelectorAll('#runs a')).map(a => a.getAttribute('href')),
})"""
FILTER = """(() => { const f = document.getElementById('filter'); f.value = 'oracle';
  f.dispatchEvent(new Event('input'));
  const n = document.querySelectorAll('#runs tbody tr').length; const c = document.getElementById('count').textContent;
  f.value = ''; f.dispatchEvent(new Event('input')); return JSON.stringify({n, c}); })()"""


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_the_page_works_at_phone_and_desktop_width_in_headless_chromium(runs, tmp_path):
    from report_chromium import Chromium

    from groundeval.report.view import write

    page = write(runs)
    differing = _differing(runs)
    assert differing  # oracle and keyword differ somewhere on these questions
    with Chromium() as browser:
        for width in (360, 1400):
            browser.open(page.resolve().as_uri(), width)
            m = json.loads(browser.evaluate(MEASURE))
            assert m["innerWidth"] == width and m["scrollWidth"] <= m["innerWidth"], m  # no sideways page scroll
            assert m["rows"] == 2 and m["links"] == ["keyword/report.html", "oracle/report.html"]
            assert set(m["questions"]) == differing, m  # every question that differs, and only those
            assert m["only"] > 0 and m["summary"].startswith(f"{len(differing)} of 8 questions differ")
            # the runs table is wider than a phone: it scrolls inside its box and says so
            assert m["hint"] == ("block" if width < 600 else "none"), (width, m["hint"])
            assert json.loads(browser.evaluate(FILTER)) == {"n": 1, "c": "1 of 2 runs"}
            browser.screenshot(tmp_path / f"view-{width}.png")
            assert browser.console_errors() == []
