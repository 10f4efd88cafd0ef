"""LangGraph (LangChain tools): the episode's tools as ``langchain_core`` ``StructuredTool`` objects,
and the agent graph that records every call the model makes.

Each tool declares groundeval's JSON Schema as its ``args_schema`` (a dict), which LangChain
passes through without validating, so whatever object the model sent reaches the episode. The
reply goes back as the tool message's text (JSON).

LangGraph's prebuilt ``ToolNode`` answers a tool name it does not have itself, and a call whose
arguments are not JSON never reaches it (LangChain keeps it in the message's
``invalid_tool_calls``, which ``tools_condition`` ignores, so the graph ends): such calls would
vanish. So the agent loop to use is :func:`agent_graph` (a chat model bound to the episode's
tools, and :func:`tool_node`); a graph of your own takes :func:`tool_node` as its tool node and
:func:`tool_condition` as the edge after the model: the node runs every call of the last AI
message through the episode (the parsed ``tool_calls``, and the ``invalid_tool_calls`` with the
text as sent; an unknown name too), in the order the provider sent them.

These serve a pack question episode (:func:`gated_tools`) and a world episode
(:func:`world_tools`) alike; ``world_graph``, ``world_tool_node`` and ``world_condition`` are the
same functions under their first names. :class:`WorldAgent` runs a world agent (one graph run per
user message, the messages kept, the policy as the system message).
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
    warn_unrecorded,
    world_call,
    world_tools as _core_world_tools,
)

require("langgraph", "langchain_core", "langgraph")

from langchain_core.messages import SystemMessage, ToolMessage  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402

__all__ = [
    "WorldAgent",
    "agent_graph",
    "gated_tools",
    "tool_condition",
    "tool_node",
    "world_condition",
    "world_graph",
    "world_tool_node",
    "world_tools",
]


def _structured_tool(gated: GatedTool | WorldTool) -> StructuredTool:
    def run(**arguments: Any) -> str:
        # tool_node calls the episode itself: this runs only in a node of LangGraph's own
        warn_unrecorded(
            gated.episode,
            "a LangGraph tool node other than groundeval.adapters.langgraph.tool_node (or agent_graph): "
            "tool names it lacks and arguments that are not JSON (invalid_tool_calls) are not recorded",
        )
        return gated.text(arguments)

    return StructuredTool(name=gated.name, description=gated.description, args_schema=gated.parameters, func=run)


def gated_tools(episode: Episode) -> list[StructuredTool]:
    """The episode's tools for its mode, for :func:`agent_graph` (its default) or ``model.bind_tools``
    with :func:`tool_node` (a ``ToolNode`` would let some calls vanish)."""
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


def tool_node(episode: Any) -> Callable[[Any], dict[str, Any]]:
    """A node running each call of the last message through the episode (any name, any arguments)."""

    def tools(state: Any) -> dict[str, Any]:
        out = []
        for name, arguments, call_id in _sent_calls(_messages(state)[-1]):
            reply = world_call(episode, name or "", arguments)
            out.append(ToolMessage(reply_text(reply), tool_call_id=call_id or "", name=name or ""))
        return {"messages": out}

    return tools


def tool_condition(state: Any) -> str:
    """``"tools"`` while the last message has a call (parsed or not), else ``END``."""
    return "tools" if _sent_calls(_messages(state)[-1]) else END


def _default_tools(episode: Any) -> list[StructuredTool]:
    return gated_tools(episode) if isinstance(episode, Episode) else world_tools(episode)


def agent_graph(model: Any, episode: Any, tools: list[StructuredTool] | None = None) -> Any:
    """The usual loop, compiled: ``model`` (a chat model) bound to ``tools`` (default: the
    episode's own, :func:`gated_tools` or :func:`world_tools`), and :func:`tool_node`; run it
    with ``graph.invoke({"messages": [...]})``."""
    bound = model.bind_tools(tools if tools is not None else _default_tools(episode))

    def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", tool_node(episode))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tool_condition, ["tools", END])
    graph.add_edge("tools", "model")
    return graph.compile()


# the first names of the same functions (worlds came first)
world_tool_node = tool_node
world_condition = tool_condition
world_graph = agent_graph


class WorldAgent(FrameworkWorldAgent):
    """A world agent from ``build(tools, episode) -> compiled graph`` over ``{"messages": [...]}``
    (e.g. ``lambda tools, ep: agent_graph(ChatOpenAI(...), ep, tools)``):
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
