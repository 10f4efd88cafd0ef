"""Hand-built questions and traces for scoring tests (the generator and runtime are
other areas; these builders only use the shared models)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from groundeval.questions.model import CounterfactualTruth, PerspectiveTruth, Question, SilenceTruth
from groundeval.trace.model import Submission, ToolCall, Trace

AS_OF = datetime(2026, 3, 5, tzinfo=timezone.utc)


def question(
    track: str,
    truth: Any,
    *,
    qid: str = "q1",
    bucket: str = "positive",
    difficulty: str = "easy",
    actor: str | None = "alice",
    schema: dict | None = None,
) -> Question:
    gates = {"perspective": ["horizon", "subsystem", "actor"], "counterfactual": ["horizon"], "silence": []}[track]
    return Question(
        id=qid,
        track=track,
        bucket=bucket,
        difficulty=difficulty,
        text="?",
        actor=actor,
        as_of=AS_OF,
        gates=gates,
        answer_schema=schema or {"type": "object"},
        ground_truth=truth,
    )


def perspective(known: bool = True, evidence=("slack-1",), blocked=(), bucket="positive", qid="p1", **kw) -> Question:
    truth = PerspectiveTruth(
        could_actor_have_known=known,
        target_event_id="E1",
        target_event_type="meeting",
        target_artifacts=sorted(set(evidence) | {"zoom-1"}),
        evidence_artifacts=list(evidence),
        blocked_subsystems=list(blocked),
    )
    return question("perspective", truth, qid=qid, bucket=bucket, **kw)


def counterfactual(positive: bool = True, qid="c1", **kw) -> Question:
    truth = CounterfactualTruth(
        outcome_changed=positive,
        causal_mechanism="escalation_drives_resolution" if positive else "none",
        mechanism_aliases=["customer pressure"] if positive else [],
        mechanism_direction="cause_to_effect" if positive else "no_causal_link",
        cause_event_id="EV-C",
        effect_event_id="EV-E",
        cause_event_type="customer_escalation",
        effect_event_type="incident_resolved",
        actors=["alice", "dave"],
        evidence_artifacts=["JIRA-42", "ZD-7"],
        cause_artifacts=["ZD-7"],
        effect_artifacts=["JIRA-42"],
    )
    schema = {
        "type": "object",
        "properties": {
            "causal_mechanism": {"enum": ["escalation_drives_resolution", "resolution_triggers_postmortem", "none"]}
        },
    }
    return question(
        "counterfactual", truth, qid=qid, bucket="positive" if positive else "negative", schema=schema, **kw
    )


def silence(exists: bool = False, qid="s1", space=("JIRA-43", "PM-43", "PM-41"), **kw) -> Question:
    truth = SilenceTruth(
        exists=exists,
        spec="postmortem_after_resolution",
        trigger_event_id="EV-T",
        trigger_event_type="incident_resolved",
        response_event_type="postmortem_written",
        response_event_id="EV-R" if exists else None,
        expected_search_space=list(space),
        expected_subsystems=["confluence"],
        evidence_artifacts=["PM-42"] if exists else [],
    )
    return question("silence", truth, qid=qid, bucket="presence" if exists else "absence", actor=None, **kw)


def search(query="postmortem", subsystem=None, hits=(), flags=(), status=None) -> dict:
    args = {"query": query}
    if subsystem is not None:
        args["subsystem"] = subsystem
    return {
        "tool": "search_artifacts",
        "arguments": args,
        "status": status or "ok",
        "result_ids": list(hits),
        "flags": list(flags),
    }


def fetch(aid: str, flags=(), status=None) -> dict:
    st = status or ("denied" if flags else "ok")
    return {
        "tool": "fetch_artifact",
        "arguments": {"artifact_id": aid},
        "status": st,
        "result_ids": [aid] if st == "ok" else [],
        "flags": list(flags),
    }


def trace(
    q: Question,
    calls: list[dict],
    answer: dict | None,
    *,
    mode="tool",
    citation_flags=None,
    context_ids=(),
    agent="test",
) -> Trace:
    recs = [ToolCall(index=i, **c) for i, c in enumerate(calls)]
    subs = []
    if answer is not None:
        idx = len(recs)
        recs.append(ToolCall(index=idx, tool="submit_answer", arguments={"answer": answer}, status="ok"))
        subs.append(Submission(call_index=idx, answer=answer, valid=True, citation_flags=citation_flags or {}))
    return Trace(
        question_id=q.id,
        track=q.track,
        mode=mode,
        actor=q.actor,
        as_of=q.as_of,
        contract_digest="d",
        agent=agent,
        calls=recs,
        context_ids=list(context_ids),
        submissions=subs,
        final_answer=answer,
        status="completed" if answer is not None else "no_answer",
    )


def perfect_perspective_answer(q: Question) -> dict:
    t = q.ground_truth
    return {
        "could_actor_have_known": t.could_actor_have_known,
        "blocked_subsystems": t.blocked_subsystems,
        "evidence_artifacts": t.evidence_artifacts,
    }


def perfect_counterfactual_answer(q: Question) -> dict:
    t = q.ground_truth
    return {
        "outcome_changed": t.outcome_changed,
        "causal_mechanism": t.causal_mechanism,
        "mechanism_direction": t.mechanism_direction,
        "cause_event_id": t.cause_event_id,
        "effect_event_id": t.effect_event_id,
        "actors": t.actors,
        "evidence_artifacts": t.evidence_artifacts,
    }
