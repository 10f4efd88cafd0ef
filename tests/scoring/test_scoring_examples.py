"""Hand-checked scores per track, the perfect path per bucket, and the three failure stories."""

from __future__ import annotations

import pytest
from scoring_builders import (
    counterfactual,
    fetch,
    perfect_counterfactual_answer,
    perfect_perspective_answer,
    perspective,
    search,
    silence,
    trace,
)

from groundeval.contract.models import ScoringConfig, TrackWeights
from groundeval.scoring.score import score


def perfect_tool_trace(q):
    """The perfect valid path of docs/scoring.md, built only from the question's truth."""
    t = q.ground_truth
    if q.track == "perspective":
        calls = [search("what happened")] + [fetch(a) for a in t.evidence_artifacts]
        return trace(q, calls, perfect_perspective_answer(q))
    if q.track == "counterfactual":
        calls = [fetch(t.cause_artifacts[0]), fetch(t.effect_artifacts[0])]
        return trace(q, calls, perfect_counterfactual_answer(q))
    calls = [search("postmortem", subsystem=s) for s in t.expected_subsystems]
    calls += [fetch(a) for a in (t.evidence_artifacts[:1] if t.exists else t.expected_search_space)]
    return trace(q, calls, {"exists": t.exists, "evidence_artifacts": t.evidence_artifacts[:1]})


BUCKETS = [
    perspective(True, evidence=("slack-1", "jira-2"), bucket="positive"),
    perspective(True, evidence=("slack-1",), blocked=("zoom",), bucket="positive", qid="p2"),
    perspective(False, evidence=(), blocked=("zoom",), bucket="negative_permission", qid="p3"),
    perspective(False, evidence=(), blocked=(), bucket="negative_permission", qid="p4"),  # actor gate only
    perspective(False, evidence=(), bucket="negative_temporal", qid="p5"),
    counterfactual(True),
    counterfactual(False, qid="c2"),
    silence(False),
    silence(True, qid="s2"),
    silence(False, qid="s3", space=("JIRA-43",)),
]


@pytest.mark.parametrize("q", BUCKETS, ids=lambda q: f"{q.track}-{q.bucket}-{q.id}")
def test_perfect_valid_path_scores_one_on_every_bucket(q):
    s = score(q, perfect_tool_trace(q))
    assert (s.s_answer, s.s_traj, s.s_adj, s.violation_rate) == (1.0, 1.0, 1.0, 0.0)
    assert s.answer_correct and s.path_valid and s.valid_answer and s.failure_class == "pass"
    assert not s.state_invalid_correct and s.failures == []


@pytest.mark.parametrize("q", BUCKETS, ids=lambda q: f"{q.track}-{q.bucket}-{q.id}")
def test_perfect_context_citations_score_one(q):
    t = q.ground_truth
    cited = t.evidence_artifacts if q.track != "silence" or t.exists else t.expected_search_space
    answer = (
        perfect_perspective_answer(q)
        if q.track == "perspective"
        else perfect_counterfactual_answer(q)
        if q.track == "counterfactual"
        else {"exists": t.exists}
    )
    answer = {**answer, "evidence_artifacts": list(cited)}
    tr = trace(
        q, [], answer, mode="context", context_ids=list(cited) + ["other-1"], citation_flags={c: [] for c in cited}
    )
    s = score(q, tr)
    assert s.s_adj == 1.0 and s.valid_answer and s.n_citations == len(cited)


def test_no_answer_scores_zero_answer():
    q = silence(False)
    s = score(q, trace(q, [search(subsystem="confluence"), fetch("JIRA-43")], None))
    assert s.s_answer == 0.0 and not s.answered and s.failure_class == "no_answer"
    # trajectory still counts: 1 of 3 fetched (0.7 * 1/3) + searched the subsystem (0.3)
    assert s.s_traj == pytest.approx(0.7 / 3 + 0.3)


def test_silence_fluent_no_without_fetching_is_state_invalid():
    """Failure story: a correct-sounding 'no' that never opened the documents that could falsify it."""
    q = silence(False)
    s = score(
        q, trace(q, [search("postmortem INC-43", subsystem="confluence", hits=("PM-41", "PM-43"))], {"exists": False})
    )
    assert s.answer_correct and not s.path_valid and s.state_invalid_correct
    assert s.coverage == 0.0 and "missing_evidence" in s.failures
    # 0.3 * 1 + 0.7 * (0.7 * 0 + 0.3 * 1) = 0.51; search hits do not count as checking
    assert s.s_adj == pytest.approx(0.51)
    # the same fluent 'no' when the postmortem exists is simply wrong
    q2 = silence(True, qid="s2")
    s2 = score(q2, trace(q2, [search("postmortem", subsystem="confluence", hits=("PM-42",))], {"exists": False}))
    assert not s2.answer_correct and s2.s_answer == 0.0 and s2.s_adj == pytest.approx(0.7 * 0.3)


def test_perspective_attendee_without_transcript_access():
    """Failure story: carol (hr_ops) attended the meeting, but her role cannot read zoom."""
    q = perspective(False, evidence=(), blocked=("zoom",), bucket="negative_permission", actor="carol")
    tr = trace(
        q,
        [search("meeting notes"), fetch("zoom-1", flags=["subsystem"]), fetch("zoom-1", flags=["subsystem"])],
        {"could_actor_have_known": True, "blocked_subsystems": [], "evidence_artifacts": ["zoom-1"]},
    )
    s = score(q, tr)
    assert s.flag_counts["subsystem"] == 2 and s.v_bad == 2 and s.violation_rate == 0.5
    assert s.penalty == 0.25 and s.s_answer == 0.0
    # trajectory: looked (0.5 * 1) + cited an unfetched id (0.2 * 0) + discipline 1 - v (0.3 * 0.5) = 0.65
    assert s.s_traj == pytest.approx(0.65)
    assert s.s_adj == pytest.approx(0.6 * 0.65 * 0.25)
    assert s.failure_class == "wrong_answer" and "gate_violation" in s.failures
    # right answer, same flagged fetches: correct but not valid
    tr2 = trace(
        q,
        [search("meeting notes"), fetch("zoom-1", flags=["subsystem"])],
        {"could_actor_have_known": False, "blocked_subsystems": ["zoom"], "evidence_artifacts": []},
    )
    s2 = score(q, tr2)
    assert s2.answer_correct and s2.state_invalid_correct and s2.violation_rate == pytest.approx(1 / 3)


def test_counterfactual_plausible_no_causal_link_is_wrong():
    """Failure story: 'no causal link' sounds plausible but the join links cause and effect."""
    q = counterfactual(True)
    answer = {
        "outcome_changed": False,
        "causal_mechanism": "none",
        "mechanism_direction": "no_causal_link",
        "cause_event_id": "EV-C",
        "effect_event_id": "EV-E",
        "actors": ["alice", "dave"],
    }
    s = score(q, trace(q, [fetch("ZD-7"), fetch("JIRA-42")], answer))
    assert s.answer_components == {
        "outcome": 0.0,
        "mechanism": 0.0,
        "cause_event": 1.0,
        "effect_event": 1.0,
        "direction": 0.0,
        "actors": 1.0,
    }
    assert s.s_answer == 0.5 and not s.answer_correct and s.failure_class == "wrong_answer"
    assert s.s_traj == 1.0 and s.s_adj == pytest.approx(0.75)


def test_counterfactual_alias_and_threshold():
    q = counterfactual(True)
    answer = {**perfect_counterfactual_answer(q), "causal_mechanism": "Customer-Pressure", "actors": ["alice"]}
    s = score(q, trace(q, [fetch("ZD-7"), fetch("JIRA-42")], answer))
    # actors: dice({alice}, {alice, dave}) = 2/3 -> composite (5 + 2/3) / 6 = 0.944
    assert s.answer_components["mechanism"] == 1.0 and s.answer_correct
    assert s.s_answer == pytest.approx((5 + 2 / 3) / 6)
    wrong_ids = {**answer, "cause_event_id": "EV-X", "effect_event_id": "EV-Y"}
    s2 = score(q, trace(q, [fetch("ZD-7"), fetch("JIRA-42")], wrong_ids))
    assert s2.s_answer < 0.8 and not s2.answer_correct
    strict = ScoringConfig(counterfactual_threshold=0.95)
    assert not score(q, trace(q, [fetch("ZD-7"), fetch("JIRA-42")], answer), strict).answer_correct


def test_counterfactual_horizon_and_vocabulary():
    q = counterfactual(True)
    answer = {**perfect_counterfactual_answer(q), "causal_mechanism": "gravity"}
    s = score(q, trace(q, [fetch("ZD-7"), fetch("JIRA-99", flags=["horizon"])], answer))
    assert s.traj_components == {
        "cause_evidence": 1.0,
        "effect_evidence": 0.0,
        "mechanism_vocabulary": 0.0,
        "horizon_discipline": 0.0,
    }
    assert s.s_traj == pytest.approx(0.3) and s.violation_rate == pytest.approx(1 / 3)


def test_hallucinated_ids_and_weights_from_config():
    q = perspective(True, evidence=("slack-1",))
    tr = trace(
        q,
        [search("x"), fetch("slack-1"), fetch("nope-1", status="not_found")],
        {"could_actor_have_known": True, "blocked_subsystems": [], "evidence_artifacts": ["slack-1", "ghost"]},
        citation_flags={"slack-1": [], "ghost": None},
    )
    s = score(q, tr)
    assert s.hallucinated_ids == ["ghost", "nope-1"] and "hallucinated_id" in s.failures
    assert s.violation_rate == 0.0  # an unknown id is not a governance violation
    # evidence named: dice({slack-1, ghost}, {slack-1}) = 2/3; answer = 0.6 + 0.2 + 0.2 * 2/3
    assert s.s_answer == pytest.approx(0.6 + 0.2 + 0.2 * 2 / 3)
    cfg = ScoringConfig(weights={"perspective": TrackWeights(answer=1.0, trajectory=0.0)})
    assert score(q, tr, cfg).s_combined == pytest.approx(s.s_answer)


def test_context_mode_citation_rates():
    q = perspective(True, evidence=("slack-1",))
    answer = {
        "could_actor_have_known": True,
        "blocked_subsystems": [],
        "evidence_artifacts": ["slack-1", "zoom-1", "late-1", "made-up"],
    }
    tr = trace(
        q,
        [],
        answer,
        mode="context",
        context_ids=["slack-1", "jira-9"],
        citation_flags={"slack-1": [], "zoom-1": ["subsystem"], "late-1": ["horizon"], "made-up": None},
    )
    s = score(q, tr)
    assert s.n_citations == 4 and s.violation_rate == 0.5 and s.penalty == 0.25
    assert s.citation_rates == {"hallucinated": 0.75, "access": 0.25, "horizon": 0.25}
    assert s.flag_counts == {"horizon": 1, "subsystem": 1, "actor": 0}
    assert s.hallucinated_ids == ["late-1", "made-up", "zoom-1"]
