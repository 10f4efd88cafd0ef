"""Pydantic AI: the episode's tools as ``pydantic_ai.Tool`` objects built from groundeval's schemas.

``Tool.from_schema`` declares the JSON Schema as it is and skips Pydantic AI's own argument
validation, so the episode sees whatever object the model sent and records a bad call.
(Arguments that are not JSON at all are answered by Pydantic AI itself with a retry prompt,
before any tool runs.) The reply goes back as the tool return (a JSON text).
"""

from __future__ import annotations

from typing import Any

from ..runtime.episode import Episode
from .core import GatedTool, gated_tools as _core_tools, require

require("pydantic-ai", "pydantic_ai")

from pydantic_ai import Tool  # noqa: E402

__all__ = ["gated_tools"]


def _tool(gated: GatedTool) -> Tool:
    def run(**arguments: Any) -> str:
        return gated.text(arguments)

    return Tool.from_schema(run, name=gated.name, description=gated.description, json_schema=gated.parameters)


def gated_tools(episode: Episode) -> list[Tool]:
    """``Agent(model, tools=gated_tools(episode))``: the episode's tools for its mode."""
    return [_tool(g) for g in _core_tools(episode)]
