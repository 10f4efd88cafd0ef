"""LangGraph (LangChain tools): the episode's tools as ``langchain_core`` ``StructuredTool`` objects.

Each tool declares groundeval's JSON Schema as its ``args_schema`` (a dict), which LangChain
passes through without validating, so whatever arguments the model sent reach the episode
and are recorded. Use them with any LangGraph agent: a ``ToolNode``, ``create_react_agent`` or
a chat model's ``bind_tools``. The reply goes back as the tool message's text (JSON).

Worlds: :func:`world_tools` (the world's tools and ``say_to_user``), :func:`world_tool_node`
(a graph node that runs every call of the last AI message through the episode: the parsed
``tool_calls``, and the ``invalid_tool_calls`` LangChain set aside when the arguments were not
JSON, with the text as sent; an unknown name is recorded too, where a ``ToolNode`` would answer
it itself), :func:`world_condition` (routes to that node while there is a call of either
kind), :func:`world_graph` (model node + that node) and :class:`WorldAgent` (one graph run per
user message, the messages kept, the policy as the system message). The node and the graph
serve a pack question episode too (``world_graph(model, episode, gated_tools(episode))``),
where a ``ToolNode`` answers an unknown name or unparsable arguments itself and the call never
reaches the trace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..runtime.episode import Episode
from .core import (
    FrameworkWorldAgent,
    GatedTool,
    WorldTool,
    gated_tools as _core_tools,
    reply_text,
    require,
    world_call,
    world_tools as _core_world_tools,
)

require("langgraph", "langchain_core", "langgraph")

from langchain_core.messages import SystemMessage, ToolMessage  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402

__all__ = ["WorldAgent", "gated_tools", "world_condition", "world_graph", "world_tool_node", "world_tools"]


def _structured_tool(gated: GatedTool | WorldTool) -> StructuredTool:
    def run(**arguments: Any) -> str:
        return gated.text(arguments)

    return StructuredTool(name=gated.name, description=gated.description, args_schema=gated.parameters, func=run)


def gated_tools(episode: Episode) -> list[StructuredTool]:
    """``ToolNode(gated_tools(episode))`` / ``model.bind_tools(...)``: the episode's tools for its mode."""
    return [_structured_tool(g) for g in _core_tools(episode)]


def world_tools(episode: Any, *, say_to_user: bool = True) -> list[StructuredTool]:
    """``model.bind_tools(world_tools(episode))``: a world episode's tools (and ``say_to_user``)."""
    return [_structured_tool(t) for t in _core_world_tools(episode, say_to_user=say_to_user)]


def _messages(state: Any) -> list[Any]:
    return state["messages"] if isinstance(state, dict) else getattr(state, "messages", state)


def _sent_calls(message: Any) -> list[tuple[str, Any, str]]:
    """Every call of an AI message as ``(name, arguments as sent, id)``: parsed ones with their
    object, unparsable ones with their text; in the order the provider sent them when it says."""
    calls = [(c["name"], c["args"], c["id"]) for c in getattr(message, "tool_calls", None) or []]
    calls += [(c.get("name"), c.get("args"), c.get("id")) for c in getattr(message, "invalid_tool_calls", None) or []]
    raw = (getattr(message, "additional_kwargs", None) or {}).get("tool_calls") or []
    order = {c.get("id"): i for i, c in enumerate(raw) if isinstance(c, dict)}
    return sorted(calls, key=lambda c: order.get(c[2], len(order)))  # stable: unknown ids keep their place


def world_tool_node(episode: Any) -> Callable[[Any], dict[str, Any]]:
    """A node running each call of the last message through the episode (any name, any arguments)."""

    def tools(state: Any) -> dict[str, Any]:
        out = []
        for name, arguments, call_id in _sent_calls(_messages(state)[-1]):
            reply = world_call(episode, name or "", arguments)
            out.append(ToolMessage(reply_text(reply), tool_call_id=call_id or "", name=name or ""))
        return {"messages": out}

    return tools


def world_condition(state: Any) -> str:
    """``"tools"`` while the last message has a call (parsed or not), else ``END``."""
    return "tools" if _sent_calls(_messages(state)[-1]) else END


def world_graph(model: Any, episode: Any, tools: list[StructuredTool] | None = None) -> Any:
    """The usual loop, compiled: ``model`` (a chat model) bound to ``tools`` (default: the
    world's tools and ``say_to_user``), and :func:`world_tool_node`."""
    bound = model.bind_tools(tools if tools is not None else world_tools(episode))

    def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", world_tool_node(episode))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", world_condition, ["tools", END])
    graph.add_edge("tools", "model")
    return graph.compile()


class WorldAgent(FrameworkWorldAgent):
    """A world agent from ``build(tools, episode) -> compiled graph`` over ``{"messages": [...]}``
    (e.g. ``lambda tools, ep: world_graph(ChatOpenAI(...), ep, tools)``):
    one graph run per user message, the messages kept, the world's policy as the system message."""

    def turns(self, episode: Any) -> Callable[[str], Any]:
        graph = self.build(world_tools(episode, say_to_user=self.say_to_user), episode)
        messages: list[Any] = [SystemMessage(episode.policy)]
        limit = {"recursion_limit": 2 * episode.max_steps + 5}

        def turn(text: str) -> Any:
            nonlocal messages
            state = graph.invoke({"messages": [*messages, ("user", text)]}, limit)
            messages = list(state["messages"])
            return messages[-1].content if messages else None

        return turn
