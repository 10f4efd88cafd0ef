"""report.html details at most ``max_questions`` questions (the lowest S_adj) and says so;
every score still counts in the tables."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
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


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, 1]),
            st.sampled_from(["a", "b"]),
            st.sampled_from([None, "", "x"]),
        ),
        max_size=40,
    ),
    st.integers(0, 12),
)
def test_the_detailed_scores_are_the_first_of_the_sorted_scores(rows, limit):
    """``_detailed`` (nsmallest) picks exactly ``sorted(...)[:limit]``, ties in input order;
    the Markdown's failing list (filtered, then sorted) is the sorted list filtered."""
    from groundeval.report.render import _TRACK_QUESTION, _detailed
    from groundeval.scoring.model import QuestionScore

    scores = [
        QuestionScore.model_construct(
            question_id=f"q{i % 3}", track=t, agent=a, mode="tool", s_adj=adj, failure_class="pass" if i % 2 else "x"
        )
        for i, (adj, t, a) in enumerate(rows)
    ]
    key = lambda s: (s.s_adj, s.track, s.question_id, s.agent or "", s.mode)  # noqa: E731
    got = _detailed(scores, limit)
    want = sorted(scores, key=key)[:limit] if len(scores) > limit else scores
    assert [id(s) for s in got] == [id(s) for s in want]
    failing = sorted([s for s in scores if s.failure_class != "pass"], key=_TRACK_QUESTION)
    reference = [s for s in sorted(scores, key=lambda s: (s.track, s.question_id)) if s.failure_class != "pass"]
    assert [id(s) for s in failing] == [id(s) for s in reference]
