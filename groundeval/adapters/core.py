"""The episode's tools as plain callables, for any agent framework to wrap as its own tool type.

Every framework adapter is a thin shell over :func:`gated_tools`: the names, descriptions and
JSON Schemas are the ones ``groundeval tools --format openai`` serves (``submit_answer``
declares the question's own answer schema), and every call goes through
:meth:`Episode.call`, so the trace records it and the gates apply. Whatever the model sends
— text that is not JSON, a list instead of an object, unknown names, wrong types — reaches
the episode as it is and is recorded as an ``invalid`` call; nothing here raises at the agent.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import Any

from ..extras import install_command
from ..runtime.episode import Episode
from ..runtime.tools import tool, tool_specs

__all__ = ["GET_CONTEXT", "GatedTool", "gated_tools", "parse_arguments", "reply_text", "require"]

GET_CONTEXT = "get_context"


def require(extra: str, *modules: str) -> None:
    """Import ``modules`` or raise one ``ImportError`` naming the extra to install."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ImportError(
                f"groundeval.adapters needs the '{extra}' extra (module '{exc.name or module}' "
                f"is not installed): {install_command(extra)}"
            ) from None


def parse_arguments(raw: Any) -> Any:
    """A model's arguments as the episode should see them: a JSON text is parsed; text that is
    not JSON is passed on as the string it is (the episode records it as an invalid call)."""
    if isinstance(raw, (bytes, bytearray)):
        raw = raw.decode("utf-8", "surrogateescape")
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return {}  # providers send "" for a call without arguments
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def reply_text(reply: Any) -> str:
    """A tool reply as the text a model reads (JSON, ASCII so lone surrogates travel as escapes)."""
    return json.dumps(reply, ensure_ascii=True, sort_keys=True)


@dataclass(frozen=True)
class GatedTool:
    """One episode tool: what the model is told, and the call that runs it through the episode."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object
    episode: Episode

    def __call__(self, arguments: Any = None) -> dict[str, Any]:
        """Run the call (``arguments`` as the model sent them: an object, a JSON text, anything)."""
        arguments = parse_arguments(arguments)
        if self.name == GET_CONTEXT:
            # like the MCP server's get_context: the window is fixed at the start, not a recorded call
            return {"status": "ok", "context": self.episode.context()}
        return self.episode.call(self.name, arguments)

    def text(self, arguments: Any = None) -> str:
        """:meth:`__call__` with the reply as JSON text (what most frameworks hand back to the model)."""
        return reply_text(self(arguments))


def gated_tools(episode: Episode) -> list[GatedTool]:
    """The tools of ``episode``'s mode, in the order groundeval serves them: ``search_artifacts``,
    ``fetch_artifact``, ``submit_answer`` in tool mode; ``get_context`` then ``submit_answer`` in
    context mode (as the MCP server lists them); ``submit_answer`` alone zero-shot."""
    public = episode.public_question()
    names = list(public["tools"])
    if episode.mode == "context":
        names.insert(0, GET_CONTEXT)
    declared = {s["function"]["name"]: s["function"] for s in tool_specs("openai", public["answer_schema"])}
    # get_context is an MCP session tool; in process there is no episode id to name
    declared[GET_CONTEXT] = {
        "name": GET_CONTEXT,
        "description": tool(GET_CONTEXT).description,
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    }
    return [GatedTool(name, declared[name]["description"], declared[name]["parameters"], episode) for name in names]
