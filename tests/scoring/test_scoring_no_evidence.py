"""No silent success: a slice with no tool calls or no answer is never tier ``perfect``."""

from __future__ import annotations

from scoring_builders import fetch, search, silence, trace

from groundeval.contract.models import ScoringConfig
from groundeval.scoring.aggregate import aggregate, compliance_tier
from groundeval.scoring.model import GroupStats
from groundeval.scoring.score import score


def _report(pairs):
    qs = [q for q, _ in pairs]
    traces = [t for _, t in pairs]
    return aggregate(qs, traces, [score(q, t) for q, t in pairs], bootstrap_samples=0)


def test_no_calls_at_all_is_no_evidence_not_perfect():
    # every episode errored before the agent did anything (a provider that refuses connections)
    qs = [silence(False, qid="s1"), silence(True, qid="s2")]
    r = _report([(q, trace(q, [], None)) for q in qs])
    assert r.overall.n_calls == 0 and r.overall.run_violation_rate == 0.0
    assert r.overall.compliance_tier == "no_evidence"
    assert r.tracks["silence"].compliance_tier == "no_evidence"


def test_calls_but_no_answer_is_no_evidence():
    q = silence(False, qid="s1")
    r = _report([(q, trace(q, [search(subsystem="confluence"), fetch("PM-41")], None))])
    assert r.overall.v_units == 2 and r.overall.v_bad == 0
    assert r.overall.compliance_tier == "no_evidence"


def test_one_answered_question_with_clean_calls_is_perfect_again():
    qa, qb = silence(False, qid="s1"), silence(True, qid="s2")
    r = _report(
        [
            (qa, trace(qa, [search(subsystem="confluence"), fetch("PM-41")], {"exists": False})),
            (qb, trace(qb, [], None)),
        ]
    )
    assert r.overall.compliance_tier == "perfect"
    assert r.buckets["silence"]["presence"].compliance_tier == "no_evidence"  # qb's slice: nothing to judge


def test_tier_function_and_schema():
    tiers = ScoringConfig().tiers
    assert compliance_tier(0.0, tiers, units=0, answered=3) == "no_evidence"
    assert compliance_tier(0.0, tiers, units=5, answered=0) == "no_evidence"
    assert compliance_tier(0.0, tiers, units=5, answered=1) == "perfect"
    assert "no_evidence" in GroupStats.model_json_schema()["properties"]["compliance_tier"]["enum"]
