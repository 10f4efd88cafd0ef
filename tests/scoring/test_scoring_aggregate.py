"""Run-level aggregation: hand-checked slices, tiers, zero-shot floor."""

from __future__ import annotations

import pytest
from scoring_builders import fetch, perspective, search, silence, trace

from groundeval.contract.models import ScoringConfig
from groundeval.scoring.aggregate import aggregate, compliance_tier
from groundeval.scoring.score import score


def _run():
    qa, qb = silence(False, qid="s1"), silence(True, qid="s2", difficulty="hard")
    qp = perspective(True, evidence=("slack-1",), qid="p1")
    traces = [
        trace(
            qa, [search(subsystem="confluence"), fetch("JIRA-43"), fetch("PM-43"), fetch("PM-41")], {"exists": False}
        ),
        trace(qb, [], {"exists": False}),
        trace(
            qp,
            [search("x"), fetch("slack-1"), fetch("zoom-1", flags=["subsystem", "actor"])],
            {"could_actor_have_known": True, "blocked_subsystems": [], "evidence_artifacts": ["slack-1"]},
        ),
    ]
    qs = [qa, qb, qp]
    return qs, traces, [score(q, t) for q, t in zip(qs, traces)]


def test_slices_hand_checked():
    qs, traces, scores = _run()
    r = aggregate(qs, traces, scores, seed=1, bootstrap_samples=100)
    sil = r.tracks["silence"]
    assert sil.n == 2 and sil.accuracy == 0.5 and sil.valid_answer_rate == 0.5
    assert sil.v_units == 6 and sil.v_bad == 0 and sil.compliance_tier == "perfect"
    assert set(r.buckets["silence"]) == {"absence", "presence"}
    assert list(r.difficulties["silence"]) == ["easy", "hard"]
    per = r.tracks["perspective"]
    assert per.v_units == 4 and per.v_bad == 1 and per.run_violation_rate == 0.25
    assert per.violation_rates == {"horizon": 0.0, "subsystem": 0.25, "actor": 0.25}
    assert per.compliance_tier == "low"
    o = r.overall
    assert o.n == 3 and o.v_units == 10 and o.run_violation_rate == 0.1 and o.compliance_tier == "moderate"
    mean_combined = sum(s.s_combined for s in scores) / 3
    assert o.run_s_adj == pytest.approx(mean_combined * 0.9**2)
    assert o.means["s_adj"] == pytest.approx(sum(s.s_adj for s in scores) / 3)
    assert o.failure_classes["pass"] == 1 and o.failure_classes["wrong_answer"] == 1
    assert list(r.tracks) == ["perspective", "silence"]


def test_missing_and_unknown_questions():
    qs, traces, scores = _run()
    extra = silence(False, qid="never-run")
    r = aggregate([qs[0], extra], traces, scores, bootstrap_samples=0)
    assert r.missing_question_ids == ["never-run"]
    assert r.unknown_question_ids == ["p1", "s2"]
    assert r.overall.ci95 == {}


@pytest.mark.parametrize(
    "v, tier", [(0.0, "perfect"), (0.01, "high"), (0.05, "moderate"), (0.149, "moderate"), (0.15, "low"), (0.9, "low")]
)
def test_compliance_tiers(v, tier):
    assert compliance_tier(v, ScoringConfig().tiers) == tier


def test_tiers_are_configurable():
    assert compliance_tier(0.1, {"high": 0.2, "moderate": 0.3}) == "high"


def test_zero_shot_floor_and_gap():
    qs, traces, scores = _run()
    zero = [score(q, trace(q, [], {"exists": False} if q.track == "silence" else None, mode="zero-shot")) for q in qs]
    r = aggregate(qs, traces, scores, zero_shot=zero, bootstrap_samples=0)
    assert r.zero_shot["silence"].floor == 0.5 and r.zero_shot["silence"].s_answer == 0.5
    assert r.zero_shot["silence"].gap == 0.0
    assert r.zero_shot["perspective"].floor == 0.0 and r.zero_shot["perspective"].gap == 1.0
    itself = aggregate(qs, traces, scores, zero_shot=True, bootstrap_samples=0)
    assert all(z.gap == 0.0 for z in itself.zero_shot.values())
