"""The HTML report as a person sees it: any width from 360 px up without horizontal page
scroll, each episode's messages and tool calls interleaved, token usage, latency, model
and agent, text search and column sorting — one self-contained file, checked in headless
Chromium at phone and desktop widths (skipped when Chromium is not installed)."""

from __future__ import annotations

import json
import re
import shutil
import struct

import pytest
from report_fixtures import questions, traces

from groundeval.report.render import render_html, write_reports
from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.score import score

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
RUN = {"agent": {"name": "openai:gpt-test", "model": "gpt-test-2026", "provider": "openai"}, "mode": "tool"}
LONG = "x" * 400  # an unbroken argument: must wrap, never widen the page


def llm_like_traces():
    """The report fixtures' traces, with what an LLM adapter records: per-turn messages naming
    their tool calls (placed by at_call), token usage, per-call latency, a runner note."""
    out = traces(good=False)
    for t in out:
        t.agent = "openai:gpt-test"
        n = len(t.calls)
        t.messages = [
            {
                "role": "assistant",
                "content": f"first I search for {t.question_id}",
                "at_call": 0,
                "tool_calls": [c.tool for c in t.calls[:1]],
                "usage": {"input_tokens": 100, "output_tokens": 20},
            },
            {
                "role": "assistant",
                "content": f"then I answer {t.question_id}",
                "at_call": min(1, n),
                "tool_calls": [c.tool for c in t.calls[1:]],
                "usage": {"input_tokens": 150, "output_tokens": 30},
            },
        ]
        t.usage = {"input_tokens": 250, "output_tokens": 50, "requests": 2}
        t.timings.call_latency_ms = [1.5 + i for i in range(n)]
        t.timings.total_ms = 1234.0 + n
    out[0].calls[0].arguments = {"query": LONG}
    out[1].messages.append({"role": "runner", "error": "provider said 503 <b>boom</b>"})
    return out


def _written(tmp_path):
    qs, ts = questions(), llm_like_traces()
    scores = [score(q, t) for q, t in zip(qs, ts)]
    report = aggregate(qs, ts, scores, seed=7, bootstrap_samples=50)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "run.json").write_text(json.dumps(RUN), encoding="utf-8")
    paths = write_reports(report, tmp_path, questions=qs, traces=ts, scores=scores)
    return report, scores, ts, paths["report.html"]


def test_episode_shows_messages_and_calls_interleaved_with_usage_latency_and_model(tmp_path):
    _, scores, ts, path = _written(tmp_path)
    html = path.read_text(encoding="utf-8")
    assert "gpt-test-2026" in html and "(openai)" in html and "openai:gpt-test" in html  # run.json's model
    p1 = html[html.index('<details class="q" id="q-p1-') :]
    p1 = p1[: p1.index("</details>")]
    # message 1, the search it announced, message 2, then the remaining calls — in that order
    order = [
        p1.index("first I search for p1"),
        p1.index("<b>search_artifacts</b>"),
        p1.index("then I answer p1"),
        p1.index("<b>fetch_artifact</b>"),
        p1.index("<b>submit_answer</b>"),
    ]
    assert order == sorted(order)
    assert "100 in · 20 out" in p1 and "250 in · 50 out · 2 requests" in p1  # per turn and per episode
    assert "1.50 ms" in p1 and "1,237 ms" in p1  # per-call and episode latency
    p3 = html[html.index('<details class="q" id="q-p3-') :]
    p3 = p3[: p3.index("</details>")]
    assert p3.index("<b>submit_answer</b>") < p3.index("provider said 503")  # the runner's note comes last
    assert "&lt;b&gt;boom&lt;/b&gt;" in p3 and "<b>boom</b>" not in p3
    # the question index: one sortable row per scored episode, linked to its details
    rows = re.findall(r'<tr data-ref="(q-[^"]+)"', html)
    assert len(rows) == len(scores) and all(f'id="{r}"' in html for r in rows)
    # self-contained: no external URL anywhere (the SVG namespace is not fetched)
    assert not re.search(r"https?://", html.replace("http://www.w3.org/2000/svg", ""))
    assert "<link" not in html and " src=" not in html


def test_html_is_deterministic_and_run_json_is_optional(tmp_path):
    qs, ts = questions(), llm_like_traces()
    scores = [score(q, t) for q, t in zip(qs, ts)]
    report = aggregate(qs, ts, scores, seed=7, bootstrap_samples=50)
    a = render_html(report, questions=qs, traces=ts, scores=scores, run=RUN)
    assert a == render_html(report, questions=qs, traces=ts, scores=scores, run=RUN)
    bare = render_html(report, questions=qs, traces=ts, scores=scores)
    assert "gpt-test-2026" in a and "gpt-test-2026" not in bare and "openai:gpt-test" in bare


def test_messages_without_at_call_follow_their_listed_tool_calls(tmp_path):
    from groundeval.report.render import _timeline

    t = traces(good=True)[0]  # search, fetch, submit
    t.messages = [
        {"role": "assistant", "content": "A", "tool_calls": ["search_artifacts", "fetch_artifact"]},
        {"role": "assistant", "content": "B", "tool_calls": ["submit_answer"]},
        {"role": "runner", "error": "C"},
    ]
    seq = [e.get("text") if e["kind"] == "message" else e["tool"] for e in _timeline(t)]
    assert seq == ["A", "search_artifacts", "fetch_artifact", "B", "submit_answer", "C"]


# ----------------------------------------------------------------------------- headless Chromium

MEASURE = """JSON.stringify({innerWidth: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
                             bodyScrollWidth: document.body.scrollWidth})"""
SORT = """(function () {
  var table = document.getElementById("qtable"), th = table.tHead.rows[0].cells[5];
  function col() { return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[0].textContent; }); }
  th.click(); var up = col(), state = th.getAttribute("aria-sort");
  th.click(); return JSON.stringify({up: up, state: state, down: col()});
})()"""
SEARCH = """(function () {
  var text = document.getElementById("f-text");
  text.value = "then I answer p3"; text.dispatchEvent(new Event("input"));
  var rows = document.querySelectorAll("#qtable tbody tr:not(.hidden)").length;
  var shown = document.getElementById("f-count").textContent;
  text.value = ""; text.dispatchEvent(new Event("input"));
  return JSON.stringify({rows: rows, shown: shown, after: document.getElementById("f-count").textContent});
})()"""
OPEN_ALL = """(function () { var d = document.querySelectorAll("details"); for (var i = 0; i < d.length; i++) { d[i].open = true; }
  return d.length; })()"""


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_report_fits_phone_and_desktop_widths_in_headless_chromium(tmp_path):
    from report_chromium import Chromium

    _, scores, _, path = _written(tmp_path)
    by_id = {s.question_id: s.s_adj for s in scores}
    with Chromium() as browser:
        for width in (360, 390, 1400):
            browser.open(path.resolve().as_uri(), width)
            for state in ("closed", "open"):  # every episode folded, then every one unfolded
                if state == "open":
                    assert browser.evaluate(OPEN_ALL) == len(scores)
                m = json.loads(browser.evaluate(MEASURE))
                assert m["innerWidth"] == width, (width, state, m)  # a phone viewport widens to fit overflow
                assert m["scrollWidth"] <= m["innerWidth"], (width, state, m)  # no horizontal page scroll
                shot = browser.screenshot(tmp_path / f"report-{width}-{state}.png")
                assert _png_size(shot)[0] == width
            sort = json.loads(browser.evaluate(SORT))
            assert sort["state"] == "ascending"
            assert [by_id[q] for q in sort["up"]] == sorted(by_id[q] for q in sort["up"])
            assert [by_id[q] for q in sort["down"]] == sorted(by_id.values(), reverse=True)
            search = json.loads(browser.evaluate(SEARCH))
            assert search == {"rows": 1, "shown": "1 shown", "after": f"{len(scores)} shown"}
            assert browser.console_errors() == []
