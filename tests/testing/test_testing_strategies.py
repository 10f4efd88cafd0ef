"""Property tests that use groundeval.testing.strategies on the project's own code."""

from __future__ import annotations

import doctest
import json
import tempfile
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.contract.models import AccessPolicy, Artifact, Event, Manifest
from groundeval.questions.model import Question
from groundeval.scoring.score import score
from groundeval.store.store import Store
from groundeval.testing import strategies as S
from groundeval.trace.model import Trace

SLOW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FAST = settings(max_examples=60, deadline=None)


def _digest(contract: S.Contract, layout: str = "folders") -> tuple[str, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(S.write_pack(contract, tmp, layout=layout))
        try:
            return store.digest, store.summary()
        finally:
            store.close()


@pytest.mark.slow
@SLOW
@given(S.contracts(), st.randoms(use_true_random=False))
def test_drawn_contract_loads_and_digest_ignores_record_order(contract, rnd):
    digest, summary = _digest(contract)
    assert summary["events"] == len(contract.events)
    assert summary["artifacts"] == len(contract.artifacts)
    shuffled_events, shuffled_artifacts = list(contract.events), list(contract.artifacts)
    rnd.shuffle(shuffled_events)
    rnd.shuffle(shuffled_artifacts)
    shuffled = replace(contract, events=shuffled_events, artifacts=shuffled_artifacts)
    assert _digest(shuffled, layout="jsonl")[0] == digest


@pytest.mark.slow
@SLOW
@given(S.contracts())
def test_digest_changes_when_a_fact_changes(contract):
    digest, _ = _digest(contract)
    events = [dict(e) for e in contract.events]
    events[0] = {**events[0], "facts": {**events[0]["facts"], "changed": True}}
    assert _digest(replace(contract, events=events))[0] != digest


@SLOW
@given(S.contracts())
def test_drawn_contract_is_internally_consistent(contract):
    ids = set(contract.artifact_ids)
    assert len(ids) == len(contract.artifacts)
    assert len(set(contract.event_ids)) == len(contract.events)
    for e in contract.events:  # every referenced artifact exists and none is created long before its event
        for ref in e["artifact_ids"].values():
            assert set([ref] if isinstance(ref, str) else ref) <= ids
    event_types = {e["type"] for e in contract.events}
    for link in contract.manifest.evaluation.causal_links:
        assert {link.cause_event_type, link.effect_event_type} <= set(S.EVENT_TYPE_POOL)
    for pair in contract.manifest.evaluation.silence_pairs:
        assert pair.search_space_subsystems
    assert event_types <= set(S.EVENT_TYPE_POOL)
    humans = {a for a, spec in contract.manifest.access.actors.items() if not spec.system}
    assert set(contract.manifest.evaluation.perspective_actors) <= humans


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(S.contracts())
def test_drawn_contracts_pass_the_verifier(contract):
    from groundeval.verifier import verify

    with tempfile.TemporaryDirectory() as tmp:
        result = verify(S.write_pack(contract, tmp), level=3)
    errors = [f"{f.rule}: {f.message}" for f in result.findings if f.severity == "error"]
    assert errors == []


@FAST
@given(S.events())
def test_events_validate(record):
    event = Event.model_validate(record)
    assert event.timestamp.tzinfo is not None
    assert json.loads(json.dumps(record)) == record


@FAST
@given(S.artifacts())
def test_artifacts_validate(record):
    art = Artifact.model_validate(record)
    assert (art.timestamp or art.created_at or art.date) is not None


@FAST
@given(S.access_policies(artifact_ids=["A-1", "A-2"]))
def test_role_windows_are_ordered_and_disjoint(policy: AccessPolicy):
    for spec in policy.actors.values():
        windows = spec.roles
        for w in windows:
            assert w.since is None or w.until is None or w.since < w.until
        for a, b in zip(windows, windows[1:]):
            assert a.until is not None and b.since is not None and a.until <= b.since
    for role in policy.roles.values():
        for g in role.subsystems:
            assert g.since is None or g.until is None or g.since < g.until
    assert set(policy.restrictions) <= {"A-1", "A-2"}


@FAST
@given(S.questions())
def test_question_truth_matches_bucket_and_public_view_hides_it(q: Question):
    truth = q.ground_truth
    assert truth.track == q.track
    if q.track == "perspective":
        assert truth.could_actor_have_known == (q.bucket == "positive")
        assert bool(truth.evidence_artifacts) == (q.bucket == "positive")
        assert bool(truth.blocked_subsystems) == (q.bucket == "negative_permission")
    elif q.track == "silence":
        assert truth.exists == (q.bucket == "presence")
        assert (truth.response_event_id is None) == (q.bucket == "absence")
    else:
        assert (truth.mechanism_direction == "no_causal_link") == (q.bucket == "negative")
    public = json.dumps(q.public())
    assert "ground_truth" not in public and "expected_search_space" not in public
    assert Question.model_validate_json(q.model_dump_json()) == q


@pytest.mark.parametrize("track", ["perspective", "counterfactual", "silence"])
def test_questions_respect_the_requested_track(track):
    @settings(max_examples=10, deadline=None)
    @given(S.questions(track=track))
    def check(q):
        assert q.track == track

    check()


def test_unknown_track_is_refused():
    @given(S.questions(track="gossip"))
    def draw(q):
        pass

    with pytest.raises(ValueError, match="unknown track"):
        draw()


@FAST
@given(S.traces())
def test_traces_round_trip_through_json(trace: Trace):
    assert Trace.model_validate_json(trace.model_dump_json()) == trace
    assert Trace.model_validate(json.loads(json.dumps(trace.model_dump(mode="json")))) == trace


@FAST
@given(st.data())
def test_trace_shape_follows_the_runtime_rules(data):
    q = data.draw(S.questions())
    trace = data.draw(S.traces(question=q))
    assert [c.index for c in trace.calls] == list(range(len(trace.calls)))
    assert trace.question_id == q.id and trace.track == q.track
    for c in trace.calls:
        assert set(c.flags) <= set(q.gates)
        assert (c.status == "denied") == bool(c.flags)
    validator = jsonschema.Draft202012Validator(q.answer_schema)
    for sub in trace.submissions:
        assert trace.calls[sub.call_index].tool == "submit_answer"
        assert sub.valid == validator.is_valid(sub.answer)
    if trace.status == "completed":
        final = trace.submissions[-1]
        assert final.valid and trace.final_answer == final.answer
        after = trace.calls[final.call_index + 1 :]
        assert all(c.status == "invalid" for c in after)
    else:
        assert trace.final_answer is None


@FAST
@given(st.data())
def test_honest_traces_break_no_rule(data):
    q = data.draw(S.questions())
    trace = data.draw(S.traces(question=q, adversarial=False))
    assert trace.status == "completed"
    assert all(c.status == "ok" and not c.flags for c in trace.calls)
    assert all(f == [] for s in trace.submissions for f in s.citation_flags.values())


@FAST
@given(st.data())
def test_scores_stay_in_unit_interval(data):
    q = data.draw(S.questions())
    trace = data.draw(S.traces(question=q))
    s = score(q, trace)
    for value in (s.s_answer, s.s_traj, s.s_combined, s.s_adj, s.violation_rate, s.penalty):
        assert 0.0 <= value <= 1.0
    assert s.s_adj <= s.s_combined + 1e-12
    assert (s.v_bad == 0) == (s.violation_rate == 0)


@FAST
@given(st.data())
def test_penalty_follows_the_flagged_call_rate(data):
    """The penalty is (1 - v)^2 with v = flagged calls / calls, for any drawn trace."""
    q = data.draw(S.questions())
    trace = data.draw(S.traces(question=q))
    s = score(q, trace)
    if s.n_calls:
        assert s.penalty == pytest.approx((1 - s.v_bad / s.v_units) ** 2)


def test_module_docstring_example_runs():
    result = doctest.testmod(S, verbose=False)
    assert result.attempted >= 3 and result.failed == 0


def test_write_pack_rejects_unknown_layout(tmp_path: Path):
    with pytest.raises(ValueError, match="layout"):
        S.write_pack(S.Contract(manifest=Manifest(name="x")), tmp_path, layout="zip")


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(S.contracts())
def test_oracle_is_perfect_on_questions_of_any_drawn_contract(contract):
    """End to end on drawn data: generator, runtime and scorer agree on what a valid path is."""
    from groundeval.agents.oracle import OracleAgent
    from groundeval.agents.runner import run_episode
    from groundeval.questions.generate import generate

    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(S.write_pack(contract, tmp))
        try:
            for q in generate(store).questions:
                s = score(q, run_episode(store, q, OracleAgent()), store.manifest.evaluation.scoring)
                assert s.s_adj == 1.0, (q.track, q.bucket, s.failures, s.answer_components, s.traj_components)
        finally:
            store.close()
