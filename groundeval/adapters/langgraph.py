"""LangGraph (LangChain tools): the episode's tools as ``langchain_core`` ``StructuredTool`` objects.

Each tool declares groundeval's JSON Schema as its ``args_schema`` (a dict), which LangChain
passes through without validating, so whatever arguments the model sent reach the episode
and are recorded. Use them with any LangGraph agent: a ``ToolNode``, ``create_react_agent`` or
a chat model's ``bind_tools``. The reply goes back as the tool message's text (JSON).
"""

from __future__ import annotations

from typing import Any

from ..runtime.episode import Episode
from .core import GatedTool, gated_tools as _core_tools, require

require("langgraph", "langchain_core")

from langchain_core.tools import StructuredTool  # noqa: E402

__all__ = ["gated_tools"]


def _structured_tool(gated: GatedTool) -> StructuredTool:
    def run(**arguments: Any) -> str:
        return gated.text(arguments)

    return StructuredTool(name=gated.name, description=gated.description, args_schema=gated.parameters, func=run)


def gated_tools(episode: Episode) -> list[StructuredTool]:
    """``ToolNode(gated_tools(episode))`` / ``model.bind_tools(...)``: the episode's tools for its mode."""
    return [_structured_tool(g) for g in _core_tools(episode)]
