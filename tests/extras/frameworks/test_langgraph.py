"""LangGraph: a real LangGraph agent (model node + ``ToolNode``) answers through the gated tools."""

from __future__ import annotations

import pytest
from conftest import need
from framework_scenarios import answered, check_agent_like_direct_calls, misbehaves
from llm_server import MODEL, LLMServer

need("langgraph", "langgraph")
langchain_openai = need("langchain_openai", "langgraph")

from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode, tools_condition  # noqa: E402

from groundeval.adapters.langgraph import gated_tools  # noqa: E402
from groundeval.runtime.episode import Episode  # noqa: E402

# these tests run the framework's own route on purpose (well-formed calls); the adapter warns that
# the calls the framework answers itself would not be recorded there (test_pack_vanishing_calls.py)
pytestmark = pytest.mark.filterwarnings("ignore:groundeval:UserWarning")


def _agent(base_url: str, tools):
    model = langchain_openai.ChatOpenAI(model=MODEL, base_url=base_url, api_key="local", max_retries=0)
    bound = model.bind_tools(tools)

    def think(state: MessagesState):
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


def _run(store, scenario):
    with LLMServer(scenario.script()) as srv, Episode(store, scenario.question, agent="langgraph") as ep:
        agent = _agent(srv.base_url, gated_tools(ep))
        state = agent.invoke({"messages": [("user", ep.question.text)]}, {"recursion_limit": 20})
    assert state["messages"][-1].content == "Submitted."
    assert not srv.llm.exhausted
    return ep.trace, srv.llm


@pytest.mark.parametrize("make", [answered, misbehaves], ids=["answered", "misbehaves"])
def test_agent_trace_scores_as_direct_calls(store, questions, make):
    check_agent_like_direct_calls(store, questions, make, _run)
