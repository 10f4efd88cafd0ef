"""report.html details at most ``max_questions`` questions (the lowest S_adj) and says so;
every score still counts in the tables."""

from __future__ import annotations

from report_fixtures import questions, traces

from groundeval.report.render import render_html
from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.score import score


def _run():
    qs = questions()
    ts = traces(False)[:3] + traces(True)[3:]
    scores = [score(q, t) for q, t in zip(qs, ts)]
    return qs, ts, scores, aggregate(qs, ts, scores, bootstrap_samples=0)


def test_html_details_the_lowest_scores_up_to_the_limit():
    qs, ts, scores, report = _run()
    full = render_html(report, questions=qs, traces=ts, scores=scores, max_questions=None)
    assert full.count('<details class="q"') == len(scores) and "f-omitted" not in full
    limited = render_html(report, questions=qs, traces=ts, scores=scores, max_questions=2)
    assert limited.count('<details class="q"') == 2
    assert f"2 of {len(scores)} questions are detailed here" in limited
    worst = sorted(scores, key=lambda s: (s.s_adj, s.track, s.question_id))[:2]
    shown = [s for s in scores if f"<code>{s.question_id}</code>" in limited]
    assert sorted(s.question_id for s in shown) == sorted(s.question_id for s in worst)
    assert f"{report.overall.n}" in limited  # the tables still count every score


def test_under_the_limit_nothing_changes():
    qs, ts, scores, report = _run()
    assert render_html(report, questions=qs, traces=ts, scores=scores) == render_html(
        report, questions=qs, traces=ts, scores=scores, max_questions=None
    )
