"""An errored or empty episode scores 0 everywhere (issue 32 items 1-2): decided once, in the
scorer's verdict, for every track and every profile; the run report counts them; a zero-shot
run is never tier ``perfect``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_builders import counterfactual, fetch, perspective, search, silence, trace

from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.model import RunReport
from groundeval.trace.model import Submission, ToolCall
from groundeval.scoring.profiles import score as profile_score
from groundeval.scoring.score import retrieval_count, score, void_reason
from groundeval.testing.strategies import questions, traces

QUESTIONS = [perspective(), perspective(known=False, evidence=(), bucket="negative_temporal", qid="p2")]
QUESTIONS += [counterfactual(), counterfactual(positive=False, qid="c2"), silence(), silence(True, qid="s2")]
ZEROED = ("s_answer", "s_traj", "s_combined", "s_adj")


def _errored(q, calls, status="error"):
    t = trace(q, calls, None)
    t.status = status
    t.messages.append({"role": "runner", "error": "RuntimeError: boom"})
    return t


def _assert_zero(s, reason):
    assert all(getattr(s, f) == 0.0 for f in ZEROED), s
    assert set(s.answer_components.values()) <= {0.0} and set(s.traj_components.values()) <= {0.0}
    assert not (s.answer_correct or s.path_valid or s.valid_answer or s.state_invalid_correct)
    assert reason in s.failures and s.failure_class == "no_answer"


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
@pytest.mark.parametrize("profile", ["default", "paper"])
def test_an_empty_episode_scores_zero_on_every_track_and_profile(q, profile):
    s = profile_score(q, trace(q, [], None), None, profile)
    _assert_zero(s, "empty")
    assert s.n_calls == 0 and s.violation_rate == 0.0


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
@pytest.mark.parametrize("status", ["error", "timeout"])
@pytest.mark.parametrize("profile", ["default", "paper"])
def test_an_errored_episode_scores_zero_even_after_clean_calls(q, status, profile):
    calls = [search(subsystem="confluence"), fetch("PM-41"), fetch("JIRA-42"), fetch("slack-1")]
    finished = profile_score(q, trace(q, calls, None), None, profile)  # the same calls, no answer, not errored
    assert finished.s_traj > 0  # so the zero below is the rule, not the calls
    s = profile_score(q, _errored(q, calls, status), None, profile)
    _assert_zero(s, "errored")
    assert s.n_calls == len(calls) and s.v_units == finished.v_units  # the path's facts stay as recorded


def test_calls_without_an_answer_keep_their_trajectory_credit():
    q = silence()
    s = score(q, trace(q, [search(subsystem="confluence"), fetch("PM-41")], None))
    assert s.s_answer == 0.0 and s.s_traj > 0 and "empty" not in s.failures and "errored" not in s.failures


def _unknown_tool() -> dict:
    return {"tool": "lookup_everything", "arguments": {"q": "x"}, "status": "invalid", "result_ids": [], "flags": []}


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
@pytest.mark.parametrize("profile", ["default", "paper"])
def test_calls_that_looked_nothing_up_and_no_answer_are_an_empty_episode(q, profile):
    """Calls of a tool that does not exist look nothing up: without an answer they earn no
    grounding or gate-discipline credit, as no call at all earns none."""
    s = profile_score(q, trace(q, [_unknown_tool(), _unknown_tool()], None), None, profile)
    _assert_zero(s, "empty")
    assert s.n_calls == 2  # the calls stay recorded


def test_an_answer_the_schema_refused_is_not_a_lookup():
    q = perspective()
    t = trace(q, [], None)
    t.calls.append(ToolCall(index=0, tool="submit_answer", arguments={"answer": {}}, status="invalid"))
    t.submissions.append(Submission(call_index=0, answer={}, valid=False, errors=["$: does not match"]))
    s = score(q, t)
    _assert_zero(s, "empty")
    assert "invalid_submission" in s.failures


def test_a_search_with_arguments_refused_still_looked_and_is_scored_by_the_track():
    q = silence()
    bad_search = search(status="invalid")
    bad_search["arguments"] = {"query": 7}
    s = score(q, trace(q, [bad_search, _unknown_tool()], None))
    assert "empty" not in s.failures and s.failure_class == "no_answer"  # scored by the track's rules, not voided


def test_the_rule():
    assert void_reason("error", "tool", 5, False) == "errored" and void_reason("timeout", "tool", 0, False) == "errored"
    assert void_reason("no_answer", "tool", 0, False) == "empty"
    assert void_reason("step_budget", "tool", 3, False) is None and void_reason("completed", "tool", 1, True) is None
    # context and zero-shot: no answer is nothing done (their calls are answers, valid or not)
    assert void_reason("no_answer", "context", 2, False) == "empty"
    assert void_reason("no_answer", "zero-shot", 1, False) == "empty"
    assert void_reason("completed", "context", 1, True) is None


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_voided_score_is_zero_and_an_unvoided_one_is_unchanged(data):
    q = data.draw(questions())
    t = data.draw(traces(question=q, adversarial=True))
    t.status = data.draw(st.sampled_from(["completed", "no_answer", "step_budget", "error", "timeout", "abandoned"]))
    s = score(q, t)
    reason = void_reason(t.status, t.mode, retrieval_count(t.calls), isinstance(t.final_answer, dict))
    if reason is None:
        assert "errored" not in s.failures and "empty" not in s.failures
    else:
        assert s.s_adj == s.s_answer == s.s_traj == 0.0 and reason in s.failures


def _report(pairs, **kw) -> RunReport:
    qs = [q for q, _ in pairs]
    ts = [t for _, t in pairs]
    return aggregate(qs, ts, [score(q, t) for q, t in pairs], bootstrap_samples=0, **kw)


def test_the_report_counts_errored_and_empty_episodes_and_writes_them_only_when_nonzero():
    a, b, c = silence(qid="s1"), silence(True, qid="s2"), perspective()
    r = _report([(a, _errored(a, [fetch("PM-41")])), (b, trace(b, [], None)), (c, trace(c, [fetch("slack-1")], None))])
    assert (r.errored_episodes, r.empty_episodes) == (1, 1)
    assert r.overall.means["s_adj"] == pytest.approx(score(c, trace(c, [fetch("slack-1")], None)).s_adj / 3)
    again = RunReport.model_validate_json(r.model_dump_json())
    assert (again.errored_episodes, again.empty_episodes) == (1, 1)
    clean = _report([(c, trace(c, [fetch("slack-1")], {"could_actor_have_known": True}))])
    dumped = clean.model_dump()
    assert "errored_episodes" not in dumped and "empty_episodes" not in dumped  # a clean report keeps its bytes


def test_a_zero_shot_run_is_no_evidence_not_perfect():
    qs = [silence(qid="s1"), perspective()]
    answers = [{"exists": False}, {"could_actor_have_known": True}]
    r = _report([(q, trace(q, [], a, mode="zero-shot")) for q, a in zip(qs, answers)])
    assert r.overall.v_units == 2 and r.overall.run_violation_rate == 0.0  # the submit calls
    assert r.overall.compliance_tier == "no_evidence"
    assert {g.compliance_tier for g in r.tracks.values()} == {"no_evidence"}
    # issue 30: a tool episode that never searched or fetched met no gate either: no evidence
    tool = _report([(q, trace(q, [], a)) for q, a in zip(qs, answers)])
    assert tool.overall.compliance_tier == "no_evidence" and tool.overall.v_units == 2
    looked = _report([(q, trace(q, [search("postmortem")], a)) for q, a in zip(qs, answers)])
    assert looked.overall.compliance_tier == "perfect"  # its calls were judged (v over them)
    mixed = _report([(qs[0], trace(qs[0], [], answers[0])), (qs[1], trace(qs[1], [fetch("slack-1")], answers[1]))])
    assert mixed.overall.compliance_tier == "perfect" and mixed.tracks["silence"].compliance_tier == "no_evidence"


def test_a_zero_shot_answer_earns_no_trajectory_credit():
    """Issue 30 item 7: with no tool there is no path, so nothing of it is credited (gate
    discipline, citation grounding, horizon discipline, a valid mechanism word were 1 with no call)."""
    qs = [silence(qid="s1"), perspective(), counterfactual()]
    answers = [
        {"exists": False},
        {"could_actor_have_known": True, "evidence_artifacts": []},
        {
            "outcome_changed": True,
            "causal_mechanism": "escalation_drives_resolution",
            "cause_event_id": "EV-C",
            "effect_event_id": "EV-E",
            "mechanism_direction": "cause_to_effect",
        },
    ]
    credited = 0
    for q, a in zip(qs, answers):
        zs = score(q, trace(q, [], a, mode="zero-shot"))
        tool = score(q, trace(q, [], a))
        assert zs.s_traj == 0.0 and set(zs.traj_components.values()) == {0.0}
        assert zs.s_answer == tool.s_answer > 0  # the answer is scored as in tool mode
        credited += tool.s_traj > 0
    assert credited == 2  # the same answer with no call in tool mode still earns some (Perspective, CF)
