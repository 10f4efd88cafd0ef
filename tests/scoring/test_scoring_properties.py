"""Invariants of the scorer and the aggregate, checked on random traces."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_builders import counterfactual, perspective, silence, trace

from groundeval.report.render import report_json
from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.io import score_line
from groundeval.scoring.score import score
from groundeval.trace.io import trace_line
from groundeval.trace.model import ToolCall, Trace

QUESTIONS = [
    perspective(True, evidence=("slack-1", "jira-2")),
    perspective(False, evidence=(), blocked=("zoom",), bucket="negative_permission", qid="p3"),
    perspective(False, evidence=(), bucket="negative_temporal", qid="p5", difficulty="hard"),
    counterfactual(True),
    counterfactual(False, qid="c2", difficulty="medium"),
    silence(False),
    silence(True, qid="s2"),
]
IDS = ["slack-1", "jira-2", "zoom-1", "ZD-7", "JIRA-42", "JIRA-43", "PM-41", "PM-42", "PM-43", "ghost"]
GATES = st.lists(st.sampled_from(["horizon", "subsystem", "actor"]), max_size=3, unique=True)


@st.composite
def calls(draw, flagged=None):
    tool = draw(st.sampled_from(["search_artifacts", "fetch_artifact", "fetch_artifact", "teleport"]))
    flags = draw(GATES) if flagged is None else draw(GATES.filter(bool))
    status = draw(st.sampled_from(["ok", "not_found", "denied", "invalid", "error"]))
    if tool == "fetch_artifact":
        aid = draw(st.sampled_from(IDS))
        return {
            "tool": tool,
            "arguments": {"artifact_id": aid},
            "status": status,
            "result_ids": [aid] if status == "ok" else [],
            "flags": flags,
        }
    args = {"query": draw(st.text(max_size=8))}
    if draw(st.booleans()):
        args["subsystem"] = draw(st.sampled_from(["confluence", "zoom", "slack"]))
    return {
        "tool": tool,
        "arguments": args,
        "status": status,
        "result_ids": draw(st.lists(st.sampled_from(IDS), max_size=3)),
        "flags": flags,
    }


ANSWER_VALUES = {
    "could_actor_have_known": st.booleans(),
    "exists": st.booleans(),
    "outcome_changed": st.booleans(),
    "blocked_subsystems": st.lists(st.sampled_from(["zoom", "hr", "slack"]), max_size=2),
    "evidence_artifacts": st.lists(st.sampled_from(IDS), max_size=4),
    "causal_mechanism": st.sampled_from(["escalation_drives_resolution", "customer pressure", "none", "x", ""]),
    "mechanism_direction": st.sampled_from(["cause_to_effect", "effect_to_cause", "no_causal_link", "?"]),
    "cause_event_id": st.sampled_from(["EV-C", "EV-E", "EV-X"]),
    "effect_event_id": st.sampled_from(["EV-C", "EV-E", "EV-X"]),
    "actors": st.lists(st.sampled_from(["alice", "dave", "carol"]), max_size=3),
}


@st.composite
def cases(draw):
    q = draw(st.sampled_from(QUESTIONS))
    answer = None
    if draw(st.integers(0, 4)):
        keys = draw(st.lists(st.sampled_from(sorted(ANSWER_VALUES)), unique=True, max_size=len(ANSWER_VALUES)))
        answer = {k: draw(ANSWER_VALUES[k]) for k in keys}
    mode = draw(st.sampled_from(["tool", "tool", "context", "zero-shot"]))
    cited = (answer or {}).get("evidence_artifacts", [])
    cflags = {c: draw(st.one_of(st.none(), GATES)) for c in cited}
    ctx = draw(st.lists(st.sampled_from(IDS), max_size=5, unique=True)) if mode == "context" else []
    return q, trace(q, draw(st.lists(calls(), max_size=8)), answer, mode=mode, citation_flags=cflags, context_ids=ctx)


def _unit_values(s):
    vals = [s.s_answer, s.s_traj, s.s_combined, s.s_adj, s.violation_rate, s.penalty]
    vals += list(s.answer_components.values()) + list(s.traj_components.values()) + list(s.citation_rates.values())
    return vals + ([s.coverage] if s.coverage is not None else [])


@settings(max_examples=300, deadline=None)
@given(cases())
def test_all_scores_in_unit_interval(case):
    s = score(*case)
    assert all(0.0 <= x <= 1.0 for x in _unit_values(s))
    assert s.s_adj <= s.s_combined
    assert s.state_invalid_correct == (s.answer_correct and not s.path_valid)


@settings(max_examples=300, deadline=None)
@given(cases(), calls(flagged=True), st.integers(0, 20))
def test_adding_a_flagged_call_never_raises_s_adj(case, extra, pos):
    q, t = case
    before = score(q, t)
    rows = [c.model_dump() for c in t.calls]
    rows.insert(min(pos, len(rows)), {**extra, "index": 0})
    new_calls = [ToolCall(**{**r, "index": i}) for i, r in enumerate(rows)]
    after = score(q, t.model_copy(update={"calls": new_calls}))
    assert after.s_adj <= before.s_adj + 1e-12
    if t.mode != "context":
        assert after.violation_rate >= before.violation_rate


@settings(max_examples=150, deadline=None)
@given(cases())
def test_rescoring_the_same_bytes_gives_the_same_bytes(case):
    q, t = case
    line = trace_line(t)
    first = score_line(score(q, Trace.model_validate_json(line)))
    again = score_line(score(q, Trace.model_validate_json(line)))
    assert first == again == score_line(score(q, t))


@settings(max_examples=25, deadline=None)
@given(st.lists(cases(), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_aggregate_is_independent_of_trace_order(batch, rnd):
    qs = {q.id: q for q, _ in batch}
    traces = [t for _, t in batch]
    scores = [score(q, t) for q, t in batch]
    order = list(range(len(batch)))
    rnd.shuffle(order)
    a = aggregate(list(qs.values()), traces, scores, seed=3, bootstrap_samples=50)
    b = aggregate(
        list(reversed(qs.values())),
        [traces[i] for i in order],
        [scores[i] for i in order],
        seed=3,
        bootstrap_samples=50,
    )
    assert report_json(a) == report_json(b)


@pytest.mark.parametrize("flagged, factor", [(0, 1.0), (1, 0.5625), (2, 0.25), (3, 0.0625)])
def test_penalty_factor_at_quarter_steps(flagged, factor):
    q = silence(False)
    calls_ = [
        {
            "tool": "fetch_artifact",
            "arguments": {"artifact_id": a},
            "status": "ok",
            "result_ids": [a],
            "flags": ["horizon"] if i < flagged else [],
        }
        for i, a in enumerate(["JIRA-43", "PM-43", "PM-41"])
    ]
    s = score(q, trace(q, calls_, {"exists": False}))  # 3 fetches + the submit = 4 calls
    assert s.v_units == 4 and s.violation_rate == flagged / 4
    assert s.penalty == factor
    assert s.s_adj == pytest.approx(s.s_combined * factor)


def test_bootstrap_is_seeded():
    rng = random.Random(1)
    batch = [
        (q, trace(q, [], {"exists": rng.random() < 0.5})) for q in [silence(False, qid=f"s{i}") for i in range(30)]
    ]
    scores = [score(q, t) for q, t in batch]
    a = aggregate(None, None, scores, seed=5, bootstrap_samples=200)
    assert a == aggregate(None, None, scores, seed=5, bootstrap_samples=200)
    lo, hi = a.overall.ci95["accuracy"]
    assert lo <= a.overall.accuracy <= hi and lo < hi


@settings(max_examples=200, deadline=None)
@given(cases())
def test_score_equals_its_validated_round_trip(case):
    """score() builds QuestionScore without re-validation: every value must already be final."""
    from groundeval.scoring.model import QuestionScore

    s = score(*case)
    back = QuestionScore.model_validate_json(score_line(s))
    assert back == s and score_line(back) == score_line(s)
    assert all(type(getattr(s, f)) is type(getattr(back, f)) for f in QuestionScore.model_fields)
