"""The observed-run timeline in the HTML report: calls in order, arguments and results
summarised, violations marked on the call that broke the rule; checked by parsing the page
and, when Chromium is installed, in a headless browser at phone and desktop widths."""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from groundeval.observe import read_runs
from groundeval.tasks import example, load_contract, score_run
from groundeval.tasks.report import write_task_reports
from groundeval.tasks.timeline import SUMMARY_CHARS, summarise

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from report_chromium import CHROMIUM  # noqa: E402

PACK = example("support")
NAMES = ["pass", "double_refund", "outside_role"]


class _Calls(HTMLParser):
    """(run id, tool, marked as a violation) of every timeline item, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, bool]] = []
        self.run = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "details" and "otl-run" in (a.get("class") or ""):
            self.run = a["id"]
        if tag == "li" and "data-tool" in a:
            self.rows.append((self.run, a["data-tool"], "violation" in (a.get("class") or "").split()))


def _write(tmp_path: Path) -> tuple[Path, list]:
    contract = load_contract(PACK)
    runs = [read_runs(PACK / "runs" / f"{n}.json")[0] for n in NAMES]
    scores = [score_run(contract, r) for r in runs]
    paths = write_task_reports(contract, runs, scores, tmp_path / "rep")
    return paths["report.html"], runs


def test_timeline_lists_calls_in_order_with_violations_marked(tmp_path):
    path, runs = _write(tmp_path)
    html = path.read_text()
    parser = _Calls()
    parser.feed(html)
    want = [(f"run-{i}", c.tool) for i, r in enumerate(runs, 1) for c in r.calls]
    assert [(r, t) for r, t, _ in parser.rows] == want
    marked = {(r, i) for i, (r, _, v) in enumerate(parser.rows) if v}
    offsets = {f"run-{i}": sum(len(x.calls) for x in runs[: i - 1]) for i in range(1, len(runs) + 1)}
    assert marked == {
        ("run-2", offsets["run-2"] + 4),
        ("run-3", offsets["run-3"] + 1),
        ("run-3", offsets["run-3"] + 2),
    }  # the second refund; the triage agent's policy and refund
    assert "end_state_mismatch" in html and "(triage)" in html and "(billing)" in html
    assert html.index("<h2>Observed runs</h2>") > html.index("<h2>Questions</h2>")
    assert html.rstrip().endswith("</html>")


def test_summaries_are_cut_and_deterministic():
    long = {"k": "x" * 500}
    s = summarise(long)
    assert len(s) == SUMMARY_CHARS and s.endswith("…")
    assert (
        summarise({"b": 1, "a": 2})
        == json.dumps({"a": 2, "b": 1}, separators=(", ", ": "))
        == summarise({"a": 2, "b": 1})
    )


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_timeline_fits_phone_and_desktop_in_headless_chromium(tmp_path):
    from report_chromium import Chromium

    path, runs = _write(tmp_path)
    probe = """JSON.stringify({w: window.innerWidth, sw: document.documentElement.scrollWidth,
        items: document.querySelectorAll('#observed-runs ol.otl li').length,
        marked: document.querySelectorAll('#observed-runs li.violation').length,
        open: Array.prototype.map.call(document.querySelectorAll('details.otl-run'), function (d) { return d.open; })})"""
    with Chromium() as browser:
        for width in (360, 1400):
            browser.open(path.resolve().as_uri(), width)
            m = json.loads(browser.evaluate(probe))
            assert m["w"] == width and m["sw"] <= width, m
            assert m["items"] == sum(len(r.calls) for r in runs) and m["marked"] == 3
            assert m["open"] == [False, True, True]  # failing runs unfolded
            assert browser.console_errors() == []
