"""OpenAI Agents SDK: the episode's tools as ``agents.FunctionTool`` objects.

The SDK hands a tool the model's arguments as JSON text; they go to the episode unparsed by
the SDK, so a malformed call is recorded rather than refused before the episode sees it.
Schemas are declared non-strict: strict mode would rewrite them (every argument required),
and the model must see what groundeval serves.
"""

from __future__ import annotations

from typing import Any

from ..runtime.episode import Episode
from .core import GatedTool, gated_tools as _core_tools, require

require("openai-agents", "agents")

from agents import FunctionTool  # noqa: E402

__all__ = ["gated_tools"]


def _function_tool(gated: GatedTool) -> FunctionTool:
    async def invoke(_context: Any, arguments: str) -> str:
        return gated.text(arguments)

    return FunctionTool(name=gated.name, description=gated.description, params_json_schema=gated.parameters,
                        on_invoke_tool=invoke, strict_json_schema=False)


def gated_tools(episode: Episode) -> list[FunctionTool]:
    """``Agent(tools=gated_tools(episode), ...)``: the episode's tools for its mode."""
    return [_function_tool(g) for g in _core_tools(episode)]
