"""What the scripted model does in every framework's tests, and how its trace is judged.

``answered``: a real answer to a bundled-pack (``tiny``) Perspective question the actor could
know — search, fetch the evidence, submit a correct answer citing it. ``misbehaves``: a
question whose target the actor may not see — a search with a wrong-typed limit (invalid), a
fetch of the gated target (denied, flagged), then a correct answer. Either run through a
framework must leave the trace the same calls leave through the Python API, and score the
same under ``groundeval.score``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import groundeval
from groundeval.runtime.episode import Episode
from llm_server import Turn, call, say


@dataclass(frozen=True)
class Scenario:
    question: Any
    calls: list[tuple[str, dict[str, Any]]]
    statuses: list[str]

    def script(self, final: str = "Submitted.") -> list[Turn]:
        return [call(name, args) for name, args in self.calls] + [say(final)]


def answered(questions) -> Scenario:
    q = next(
        q
        for q in questions.questions
        if q.track == "perspective" and q.ground_truth.could_actor_have_known and q.ground_truth.evidence_artifacts
    )
    evidence = list(q.ground_truth.evidence_artifacts)
    calls = [("search_artifacts", {"query": "postmortem", "limit": 5})]
    calls += [("fetch_artifact", {"artifact_id": a}) for a in evidence]
    calls += [("submit_answer", {"answer": {"could_actor_have_known": True, "evidence_artifacts": evidence}})]
    return Scenario(q, calls, ["ok"] * len(calls))


def misbehaves(questions) -> Scenario:
    q = next(
        q
        for q in questions.questions
        if q.track == "perspective" and not q.ground_truth.could_actor_have_known and q.ground_truth.target_artifacts
    )
    calls = [
        ("search_artifacts", {"query": "escalation", "limit": "five"}),
        ("fetch_artifact", {"artifact_id": q.ground_truth.target_artifacts[0]}),
        ("submit_answer", {"answer": {"could_actor_have_known": False}}),
    ]
    return Scenario(q, calls, ["invalid", "denied", "ok"])


def direct_trace(store, scenario: Scenario):
    """The same calls through the Episode's own methods."""
    with Episode(store, scenario.question, mode="tool", agent="direct") as ep:
        for name, args in scenario.calls:
            if name == "search_artifacts":
                ep.search(**args)
            elif name == "fetch_artifact":
                ep.fetch(**args)
            else:
                ep.submit(**args)
    return ep.trace


def _calls(trace) -> list[tuple[Any, ...]]:
    return [(c.tool, c.arguments, c.status, c.result_ids, c.flags, c.error) for c in trace.calls]


def assert_same_as_direct(store, questions, scenario: Scenario, trace) -> None:
    """The framework's trace records the scripted calls and scores as the direct run does."""
    direct = direct_trace(store, scenario)
    assert [c.status for c in trace.calls] == scenario.statuses
    assert _calls(trace) == _calls(direct)
    assert trace.status == direct.status == "completed"
    assert trace.final_answer == direct.final_answer
    framework_score, direct_score = groundeval.score(questions, [trace])[0], groundeval.score(questions, [direct])[0]
    assert framework_score.model_dump(exclude={"agent"}) == direct_score.model_dump(exclude={"agent"})
    if scenario.statuses.count("ok") == len(scenario.statuses):
        assert framework_score.failure_class == "pass" and framework_score.s_adj == 1.0
    else:
        assert framework_score.violation_rate > 0 and framework_score.penalty < 1.0
        denied = next(c for c in trace.calls if c.status == "denied")
        assert denied.flags  # the gates it broke


def assert_declared(request: dict[str, Any], question) -> None:
    """The framework declared exactly the tools ``groundeval tools`` serves, for this question."""
    from groundeval.runtime.tools import tool_specs

    served = {s["function"]["name"]: s["function"] for s in tool_specs("openai", question.answer_schema)}
    sent = {t["function"]["name"]: t["function"] for t in request["tools"]}
    assert sorted(sent) == sorted(served)
    for name, fn in sent.items():
        assert fn["description"] == served[name]["description"]
        assert fn["parameters"] == served[name]["parameters"]


def assert_replies_returned(llm, trace) -> None:
    """Every recorded call's reply went back to the model as a tool message, in order."""
    import json

    replies = [json.loads(m["content"]) if isinstance(m["content"], str) else m["content"] for m in llm.tool_messages()]
    assert [r["status"] for r in replies] == ["not_found" if c.status == "denied" else c.status for c in trace.calls]


def check_agent_like_direct_calls(store, questions, make, run) -> None:
    """A framework's agent (``run(store, scenario) -> (trace, llm)``) plays the scenario made by
    ``make``: the model was told groundeval's tools, every reply went back to it, and the trace
    scores as the same calls made through the Python API."""
    scenario = make(questions)
    trace, llm = run(store, scenario)
    assert_declared(llm.requests[0], scenario.question)
    assert_replies_returned(llm, trace)
    assert_same_as_direct(store, questions, scenario, trace)
