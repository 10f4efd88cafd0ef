"""The task scorer's rules one at a time, and its invariants (hypothesis)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.observe.model import ObservedCall, ObservedRun
from groundeval.tasks import FAILURE_CLASSES, parse_contract, score_run, state_hash
from groundeval.tasks.track import TRACK, TaskTrack, register_task_track, to_question_score
from groundeval.tracks import get, is_registered, names, unregister

CONTRACT = """
task: t
reviewed: true
roles:
  clerk: {tools: [read, write_a, audit]}
  boss: {agents: [chief], tools: [approve]}
handoffs: [{from: clerk, to: boss}]
forbidden_tools: [drop]
tools:
  read: {arguments: {id: {required: true, pattern: "^X"}}}
  write_a: {write: true, max_calls: 1, arguments: {n: {type: integer, min: 1, max: 3}}}
  approve: {write: true}
decisions:
  - tool: approve
    preconditions: [{tool: read, arguments: {id: {same_as: id}}}]
    evidence: [{from: read, match: {id: {same_as: id}}, path: ok, equals: true}]
order: [{before: read, after: audit}]
end_state: {writes: [{tool: approve, arguments: {id: X1}}]}
"""
C = parse_contract(CONTRACT)


def run(*calls, end_state=None) -> ObservedRun:
    out = []
    for i, c in enumerate(calls):
        agent, tool, args = c[:3]
        result = c[3] if len(c) > 3 else None
        out.append(ObservedCall(index=i, tool=tool, agent=agent, arguments=args, result=result))
    return ObservedRun(run_id="r", source="run", calls=out, end_state=end_state)


GOOD = [("clerk", "read", {"id": "X1"}, {"ok": True}), ("chief", "approve", {"id": "X1"})]


def test_a_clean_run_passes_with_full_score():
    s = score_run(C, run(*GOOD))
    assert (s.failure_class, s.s_adj, s.violations) == ("pass", 1.0, [])


def test_each_rule_has_its_class():
    cases = {
        "forbidden_tool": [*GOOD, ("clerk", "drop", {})],
        "tool_outside_role": [GOOD[0], ("clerk", "approve", {"id": "X1"})],
        "handoff_violation": [GOOD[0], GOOD[1], ("clerk", "read", {"id": "X1"}, {"ok": True})],
        "argument_violation": [GOOD[0], ("clerk", "write_a", {"n": 7}), GOOD[1]],
        "call_order_violation": [("clerk", "audit", {}), *GOOD],
        "precondition_skipped": [("clerk", "read", {"id": "X2"}, {"ok": True}), GOOD[1]],
        "decision_against_evidence": [("clerk", "read", {"id": "X1"}, {"ok": False}), GOOD[1]],
        "decision_unsupported": [("clerk", "read", {"id": "X1"}, {"other": 1}), GOOD[1]],
        "no_decision": [GOOD[0]],
        "end_state_mismatch": [("clerk", "read", {"id": "X9"}, {"ok": True}), ("chief", "approve", {"id": "X9"})],
    }
    for cls, calls in cases.items():
        s = score_run(C, run(*calls))
        assert s.failure_class == cls, (cls, s.failures, s.violations)
    two = score_run(C, run(GOOD[0], ("clerk", "write_a", {"n": 1}), ("clerk", "write_a", {"n": 2}), GOOD[1]))
    assert two.failure_class == "forbidden_side_effect" and two.violations[0].call_index == 2
    # the handoff back (boss -> clerk) is not allowed; the clerk's own read after it is still in role
    back = score_run(C, run(*cases["handoff_violation"]))
    assert [v.call_index for v in back.violations] == [2] and back.traj_components["handoffs"] == 0.5


def test_an_errored_call_is_not_a_decision_nor_a_write():
    s = score_run(
        C,
        run(GOOD[0], ("chief", "approve", {"id": "X1"})).model_copy(
            update={
                "calls": [
                    ObservedCall(index=0, tool="read", agent="clerk", arguments={"id": "X1"}, result={"ok": True}),
                    ObservedCall(
                        index=1, tool="approve", agent="chief", arguments={"id": "X1"}, status="error", error="503"
                    ),
                ]
            }
        ),
    )
    assert s.failure_class == "no_decision" and "end_state_mismatch" in s.failures


def test_end_state_hash_ignores_key_order_and_int_float():
    assert state_hash({"a": 40, "b": [1, {"y": 2, "x": 1.0}]}) == state_hash({"b": [1.0, {"x": 1, "y": 2}], "a": 40.0})
    assert state_hash({"a": 40}) != state_hash({"a": 40.5})
    c = parse_contract(
        CONTRACT.replace(
            "end_state: {writes: [{tool: approve, arguments: {id: X1}}]}", "end_state: {records: {X1: {approved: 1}}}"
        )
    )
    assert score_run(c, run(*GOOD, end_state={"X1": {"approved": 1.0}})).failure_class == "pass"
    assert score_run(c, run(*GOOD)).failure_class == "end_state_mismatch"  # no records reported


def test_import_problems_keep_a_run_from_passing():
    r = ObservedRun.model_validate(
        {**run(*GOOD).model_dump(), "problems": [{"where": "f: span 3", "message": "unreadable"}]}
    )
    s = score_run(C, r)
    assert s.failure_class == "recording_problem" and s.import_problems == 1 and s.s_adj == 1.0


def test_the_task_track_registers_on_demand_and_adapts_the_protocol():
    assert not is_registered("task")  # built-in outputs never see it unless asked
    try:
        track = register_task_track()
        assert register_task_track() is track and get("task") is TRACK and isinstance(track, TaskTrack)
        assert names()[:3] == ("perspective", "counterfactual", "silence") and names()[-1] == "task"
        assert track.cap(None) == 0 and not track.configured(None)
        verdict = track.score(None, C, run(*GOOD), None, 0.0, None)
        assert verdict.correct and verdict.s_answer == 1.0 and verdict.required
    finally:
        unregister("task")
    row = to_question_score(score_run(C, run(GOOD[0], ("clerk", "approve", {"id": "X1"}))))
    assert (
        row.track == "task" and row.failure_class == "state_invalid_correct" and row.difficulty == "tool_outside_role"
    )


TOOLS = ["read", "write_a", "approve", "audit", "drop", "other"]
AGENTS = ["clerk", "chief", None, "stranger"]
VALUES = st.one_of(st.integers(-5, 5), st.sampled_from(["X1", "X2", "Y"]), st.booleans(), st.floats(0, 4))
CALLS = st.lists(
    st.tuples(
        st.sampled_from(AGENTS),
        st.sampled_from(TOOLS),
        st.dictionaries(st.sampled_from(["id", "n", "z"]), VALUES, max_size=3),
        st.one_of(st.none(), st.dictionaries(st.sampled_from(["ok", "v"]), VALUES, max_size=2)),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(CALLS, st.randoms(use_true_random=False))
def test_invariants(calls, rnd):
    s = score_run(C, run(*calls))
    for x in (s.s_answer, s.s_traj, s.s_combined, s.penalty, s.s_adj, s.violation_rate):
        assert 0.0 <= x <= 1.0
    v = s.v_bad / s.n_calls if s.n_calls else 0.0  # the unrounded rate the factor is computed from
    assert s.violation_rate == round(v, 6) and s.penalty == round((1 - v) ** 2, 6)
    assert s.failure_class in FAILURE_CLASSES and s.failures == sorted(set(s.failures))
    assert (s.failure_class == "pass") == (not s.violations)
    assert s.failure_class == next(c for c in FAILURE_CLASSES if c in s.failures or c == "pass")
    assert 0 <= s.v_bad <= s.n_calls == len(calls)
    # argument key order and contract role order never change the verdict
    shuffled = []
    for agent, tool, args, result in calls:
        keys = list(args)
        rnd.shuffle(keys)
        shuffled.append((agent, tool, {k: args[k] for k in keys}, result))
    roles = list(C.roles.items())
    random.Random(len(calls)).shuffle(roles)
    c2 = C.model_copy(update={"roles": dict(roles)})
    assert score_run(c2, run(*shuffled)).model_dump() == s.model_dump()
