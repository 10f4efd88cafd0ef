"""Microsoft Agent Framework: a real ``agent_framework.Agent`` answers through the gated tools."""

from __future__ import annotations

import asyncio

import pytest
from conftest import need
from framework_scenarios import answered, check_agent_like_direct_calls, misbehaves
from llm_server import MODEL, LLMServer

agent_framework = need("agent_framework", "agent-framework")
need("agent_framework_openai", "agent-framework")

from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402

from groundeval.adapters.agent_framework import GatedMiddleware, gated_tools  # noqa: E402
from groundeval.runtime.episode import Episode  # noqa: E402


def _run(store, scenario):
    with LLMServer(scenario.script()) as srv, Episode(store, scenario.question, agent="agent-framework") as ep:
        client = OpenAIChatCompletionClient(model=MODEL, api_key="local", base_url=srv.base_url)
        agent = agent_framework.Agent(
            client=client,
            instructions="Answer through the tools.",
            tools=gated_tools(ep),
            middleware=[GatedMiddleware(ep)],
        )
        response = asyncio.run(agent.run(ep.question.text))
    assert response.text == "Submitted."
    assert not srv.llm.exhausted
    return ep.trace, srv.llm


@pytest.mark.parametrize("make", [answered, misbehaves], ids=["answered", "misbehaves"])
def test_agent_trace_scores_as_direct_calls(store, questions, make):
    check_agent_like_direct_calls(store, questions, make, _run)
