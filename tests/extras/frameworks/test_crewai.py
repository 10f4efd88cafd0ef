"""CrewAI: a real crew (one agent, one task) answers through the gated tools.

CrewAI's agents pick tools by text (ReAct: ``Action:`` / ``Action Input:``, results read back
as ``Observation:``), so the scripted model writes that text and the tools reach it through
the system prompt rather than the request's ``tools`` field.
"""

from __future__ import annotations

import json

import pytest
from conftest import need
from framework_scenarios import answered, assert_same_as_direct, misbehaves
from llm_server import MODEL, LLMServer, say

crewai = need("crewai", "crewai")

from groundeval.adapters.crewai import gated_tools  # noqa: E402
from groundeval.runtime.episode import Episode  # noqa: E402
from groundeval.runtime.tools import tool_specs  # noqa: E402

FINAL = "Submitted."


def _react_script(scenario):
    turns = [
        say(f"Thought: I call {name}.\nAction: {name}\nAction Input: {json.dumps(args)}")
        for name, args in scenario.calls
    ]
    return turns + [say(f"Thought: I now know the final answer\nFinal Answer: {FINAL}")]


def _run(store, scenario):
    with LLMServer(_react_script(scenario)) as srv, Episode(store, scenario.question, agent="crewai") as ep:
        llm = crewai.LLM(model=MODEL, provider="openai", base_url=srv.base_url, api_key="local", max_retries=0)
        agent = crewai.Agent(
            role="analyst",
            goal="Answer the question through the tools.",
            backstory="An auditor.",
            tools=gated_tools(ep),
            llm=llm,
            allow_delegation=False,
            max_iter=10,
            verbose=False,
        )
        task = crewai.Task(description=ep.question.text, expected_output="The answer, submitted.", agent=agent)
        result = crewai.Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
    assert result.raw == FINAL
    assert not srv.llm.exhausted
    return ep.trace, srv.llm


def _assert_told_tools(request, question):
    """The agent's prompt names each tool with groundeval's description and JSON Schema."""
    prompt = "\n".join(m["content"] for m in request["messages"] if isinstance(m.get("content"), str))
    for spec in tool_specs("openai", question.answer_schema):
        fn = spec["function"]
        assert (
            f"Tool Name: {fn['name']}\nTool Arguments: {json.dumps(fn['parameters'])}\n"
            f"Tool Description: {fn['description']}" in prompt
        )


def _assert_observations(llm, trace):
    """Each call's reply went back as the next observation, in order."""
    transcript = "\n".join(m["content"] for m in llm.requests[-1]["messages"] if isinstance(m.get("content"), str))
    observed = [
        json.loads(line[len("Observation: ") :])
        for line in transcript.splitlines()
        if line.startswith("Observation: {")
    ]
    assert [o["status"] for o in observed] == ["not_found" if c.status == "denied" else c.status for c in trace.calls]


@pytest.mark.parametrize("make", [answered, misbehaves], ids=["answered", "misbehaves"])
def test_agent_trace_scores_as_direct_calls(store, questions, make):
    scenario = make(questions)
    trace, llm = _run(store, scenario)
    _assert_told_tools(llm.requests[0], scenario.question)
    _assert_observations(llm, trace)
    assert_same_as_direct(store, questions, scenario, trace)
