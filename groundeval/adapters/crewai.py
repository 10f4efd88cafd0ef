"""CrewAI: the episode's tools as ``crewai.tools.BaseTool`` objects.

CrewAI validates a tool's arguments with its ``args_schema`` model before the tool runs; here
that model accepts any object (and reports groundeval's JSON Schema as its own), so the
episode sees what the model sent and records a bad call instead of CrewAI refusing it. The
agent is told each tool's name, groundeval's description and the JSON Schema of its
arguments. Results are never cached: a repeated call goes to the episode again, as it would
through any other path. The reply goes back to the agent as the observation text (JSON).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from ..runtime.episode import Episode
from .core import GatedTool, gated_tools as _core_tools, require

require("crewai", "crewai")

from crewai.tools import BaseTool  # noqa: E402

__all__ = ["CREWAI_METADATA", "GatedCrewTool", "gated_tools"]

CREWAI_METADATA = "security_context"


class _AnyArguments(BaseModel):
    """An arguments model that keeps what it is given and shows groundeval's schema."""

    model_config = ConfigDict(extra="allow")
    declared: ClassVar[dict[str, Any]] = {}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return json.loads(json.dumps(cls.declared))


def _arguments_model(gated: GatedTool) -> type[BaseModel]:
    return type(f"{gated.name}_arguments", (_AnyArguments,), {"declared": gated.parameters})


class GatedCrewTool(BaseTool):
    """One gated tool as a CrewAI tool; build them with :func:`gated_tools`."""

    _gated: GatedTool = PrivateAttr()

    def __init__(self, gated: GatedTool):
        super().__init__(
            name=gated.name,
            description=gated.description,
            args_schema=_arguments_model(gated),
            cache_function=lambda _args=None, _result=None: False,
        )
        self._gated = gated
        self._generate_description()

    def _generate_description(self) -> None:
        # CrewAI's own text lists argument types from the model's fields; this model has none,
        # so the agent reads the JSON Schema groundeval serves instead
        gated = getattr(self, "_gated", None)
        if gated is not None:
            self.description = (
                f"Tool Name: {gated.name}\nTool Arguments: {json.dumps(gated.parameters)}\n"
                f"Tool Description: {gated.description}"
            )

    def _run(self, **arguments: Any) -> str:
        # CrewAI adds its agent and task fingerprints to every call's arguments: not the model's
        arguments.pop(CREWAI_METADATA, None)
        return self._gated.text(arguments)


def gated_tools(episode: Episode) -> list[GatedCrewTool]:
    """``Agent(..., tools=gated_tools(episode))``: the episode's tools for its mode."""
    return [GatedCrewTool(g) for g in _core_tools(episode)]
