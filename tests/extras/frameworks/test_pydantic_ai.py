"""Pydantic AI: a real ``pydantic_ai.Agent`` answers through the gated tools."""

from __future__ import annotations

import pytest
from conftest import need
from framework_scenarios import answered, check_agent_like_direct_calls, misbehaves
from llm_server import MODEL, LLMServer

pydantic_ai = need("pydantic_ai", "pydantic-ai")
need("openai", "pydantic-ai")

from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from groundeval.adapters.pydantic_ai import gated_tools  # noqa: E402
from groundeval.runtime.episode import Episode  # noqa: E402

# these tests run the framework's own route on purpose (well-formed calls); the adapter warns that
# the calls the framework answers itself would not be recorded there (test_pack_vanishing_calls.py)
pytestmark = pytest.mark.filterwarnings("ignore:groundeval:UserWarning")


def _run(store, scenario):
    with LLMServer(scenario.script()) as srv, Episode(store, scenario.question, agent="pydantic-ai") as ep:
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=srv.base_url, api_key="local"))
        agent = pydantic_ai.Agent(model, instructions="Answer through the tools.", tools=gated_tools(ep))
        result = agent.run_sync(ep.question.text)
    assert result.output == "Submitted."
    assert not srv.llm.exhausted
    return ep.trace, srv.llm


@pytest.mark.parametrize("make", [answered, misbehaves], ids=["answered", "misbehaves"])
def test_agent_trace_scores_as_direct_calls(store, questions, make):
    check_agent_like_direct_calls(store, questions, make, _run)
