"""The episode's tools as plain callables, for any agent framework to wrap as its own tool type.

Every framework adapter is a thin shell over :func:`gated_tools` (and, for worlds, over
:func:`world_tools` and :func:`converse`): the names, descriptions and
JSON Schemas are the ones ``groundeval tools --format openai`` serves (``submit_answer``
declares the question's own answer schema), and every call goes through
:meth:`Episode.call`, so the trace records it and the gates apply. Whatever the model sends
— text that is not JSON, a list instead of an object, unknown names, wrong types — reaches
the episode as it is and is recorded as an ``invalid`` call; nothing here raises at the agent.

Worlds (``docs/worlds.md``): :func:`world_tools` gives a world episode's tools plus
``say_to_user`` (the reply is the user's answer), :func:`world_call` runs any call by name (an
unknown name included, so a framework's own "no such tool" path can still record it), and
:func:`converse` is the multi-turn loop every adapter shares: the framework's final output is
said to the user and the user's reply starts its next turn, until the user's stop marker, the
step budget, or a turn with nothing to say. A call is recorded exactly as
:meth:`WorldEpisode.call` records it from the Python API: arguments that are not JSON go on
as the text they were.
"""

from __future__ import annotations

import importlib
import json
import warnings
import weakref
from dataclasses import dataclass
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..extras import install_command
from ..runtime.episode import Episode
from ..runtime.tools import tool, tool_specs

if TYPE_CHECKING:
    from ..worlds.episode import WorldEpisode

__all__ = [
    "GET_CONTEXT",
    "SAY_TO_USER",
    "GatedTool",
    "FrameworkWorldAgent",
    "WorldTool",
    "converse",
    "gated_tools",
    "pack_call",
    "parse_arguments",
    "reply_text",
    "require",
    "say_call",
    "warn_unrecorded",
    "world_call",
    "world_tools",
]

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


_WARNED: weakref.WeakSet[Any] = weakref.WeakSet()


def warn_unrecorded(episode: Any, message: str) -> None:
    """Warn once per episode (``UserWarning``, naming the route that records) that its tools run
    on a route where the framework answers some calls itself, so those never reach the trace."""
    if episode in _WARNED:
        return
    _WARNED.add(episode)
    warnings.warn(f"groundeval: {message}", UserWarning, stacklevel=3)


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


# ---------------------------------------------------------------------------------------- worlds

SAY_TO_USER = "say_to_user"
SAY_DESCRIPTION = (
    "Say something to the user; the reply is the result. Ask for confirmation of a write with "
    "confirm: {tool, arguments}; say done: true when finished."
)
SAY_PARAMETERS: dict[str, Any] = {  # the same pseudo-tool as groundeval.worlds.env.WorldEnv's
    "type": "object",
    "properties": {"text": {"type": "string"}, "confirm": {"type": "object"}, "done": {"type": "boolean"}},
    "required": ["text"],
}


def say_call(episode: WorldEpisode, arguments: Any) -> dict[str, Any]:
    """A ``say_to_user`` call: the message said (the user's reply is the result), or, without a
    text, the invalid call it is (recorded as a call of a tool the world does not have). Only
    ``done: true`` ends the agent's part. Every route (adapters, ``WorldEnv``) says it here."""
    text = arguments.get("text") if isinstance(arguments, dict) else None
    if not isinstance(text, str):
        # not a message: recorded as the invalid call it is (say_to_user is no world tool)
        ended = episode.done
        out = episode.call(SAY_TO_USER, arguments)
        if ended:
            return out
        return {"ok": False, "result": None, "error": 'say_to_user takes {"text": string, "confirm"?, "done"?}'}
    reply = episode.say(text, confirm=arguments.get("confirm"), done=arguments.get("done") is True)
    return {"ok": True, "result": {"reply": reply}, "error": None}


def world_call(episode: WorldEpisode, name: Any, arguments: Any = None) -> dict[str, Any]:
    """Any call a model made to a world episode, by name and with its arguments as sent (an
    object, JSON text, anything): ``say_to_user``, a world tool, or a name the world does not
    have (recorded as an invalid call, like the Python API records it). A pack question episode
    goes to :func:`pack_call`."""
    if isinstance(episode, Episode):
        return pack_call(episode, name, arguments)
    arguments = parse_arguments(arguments)
    if name == SAY_TO_USER:
        return say_call(episode, arguments)
    return episode.call(name if isinstance(name, str) else str(name), arguments)


def pack_call(episode: Episode, name: Any, arguments: Any = None) -> dict[str, Any]:
    """Any call a model made to a pack question episode, by name and with its arguments as sent:
    one of its tools, or a name it does not have (recorded as an invalid call, as
    :meth:`Episode.call` records it from the Python API). :func:`world_call` sends pack
    episodes here, so each framework's hook for calls it would answer itself serves both."""
    if name == GET_CONTEXT and episode.mode == "context":
        return GatedTool(GET_CONTEXT, "", {}, episode)(arguments)
    return episode.call(name, parse_arguments(arguments))


@dataclass(frozen=True)
class WorldTool:
    """One tool of a world episode (or ``say_to_user``): what the model is told, and the call."""

    name: str
    description: str
    parameters: dict[str, Any]
    episode: WorldEpisode

    def __call__(self, arguments: Any = None) -> dict[str, Any]:
        return world_call(self.episode, self.name, arguments)

    def text(self, arguments: Any = None) -> str:
        return reply_text(self(arguments))


def world_tools(episode: WorldEpisode, *, say_to_user: bool = True) -> list[WorldTool]:
    """The world's tools in the order the world serves them (its JSON Schemas as they are), then
    ``say_to_user`` unless ``say_to_user=False`` (the framework's final output is then the only
    way to talk, through :func:`converse`)."""
    out = [WorldTool(t["name"], t["description"], t["parameters"], episode) for t in episode.tools]
    if say_to_user:
        out.append(WorldTool(SAY_TO_USER, SAY_DESCRIPTION, json.loads(json.dumps(SAY_PARAMETERS)), episode))
    return out


def converse(episode: WorldEpisode, turn: Callable[[str], Any], *, max_turns: int = 40) -> None:
    """The multi-turn loop: ``turn(user_text)`` runs the framework's agent once (the user's
    opening first) and returns its final output; unless the episode has ended meanwhile (the
    user stopped, the step budget is spent), a non-empty output is said to the user and the
    reply is the next turn's input. Ends on the user's stop marker, an empty output, or after
    ``max_turns`` turns. ``turn`` keeps the conversation's history, as its framework does."""
    text = episode.opening
    for _ in range(max_turns):
        if episode.done:
            return
        out = turn(text)
        if episode.done or out is None or not str(out).strip():
            return
        text = episode.say(str(out))


class FrameworkWorldAgent:
    """A framework's agent as a groundeval world agent (``run(episode)``, so
    ``groundeval.worlds.episode.run_episode`` and ``groundeval.worlds.run.run_world`` take it):
    each adapter's subclass builds the framework's tools for the episode, hands them to
    ``build`` (the user's function that makes the framework's agent) and gives
    :meth:`turns`, one framework run per user message, keeping the history; the loop is
    :func:`converse`."""

    def __init__(self, build: Callable[..., Any], *, name: str, say_to_user: bool = True, max_turns: int = 40):
        self.build = build
        self.name = name
        self.say_to_user = say_to_user
        self.max_turns = max_turns

    def turns(self, episode: WorldEpisode) -> Callable[[str], Any]:  # pragma: no cover - per framework
        raise NotImplementedError

    def run(self, episode: WorldEpisode) -> None:
        converse(episode, self.turns(episode), max_turns=self.max_turns)
