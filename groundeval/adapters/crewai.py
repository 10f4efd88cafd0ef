"""CrewAI: the episode's tools as ``crewai.tools.BaseTool`` objects, every action recorded as written.

CrewAI validates a tool's arguments with its ``args_schema`` model before the tool runs; here
that model accepts any object (and reports groundeval's JSON Schema as its own). The agent is
told each tool's name, groundeval's description and the JSON Schema of its arguments. Results
are never cached. The reply goes back to the agent as the observation text (JSON).

CrewAI reads a call out of the model's text and then rewrites or refuses it itself: a name
close to a tool's becomes that tool, an ``Action Input`` that is not JSON is repaired, an
unknown name or a repeated call never reaches a tool. So the tools built here come with an
``after_llm_call`` hook (CrewAI's own, registered once, on the first :func:`gated_tools` or
:func:`world_tools`): after each model response of an agent that holds such tools, it reads the
``Action`` / ``Action Input`` as the model wrote it (CrewAI's own pattern) and sends it to the
tools' episode; the tool CrewAI then runs, if any, answers with that call's reply instead of
calling again. Agents without these tools are left alone. Nothing to opt into:
``Agent(..., tools=gated_tools(episode))`` and a crew kickoff record every action.

Worlds: :func:`world_tools` (the world's tools and ``say_to_user``) and :class:`WorldAgent`
(one crew kickoff per user message, the conversation so far in the task; the final answer is
said to the user). :func:`recording` is kept for code written against the first release: the
hook is always on now, so it does nothing more.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

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

require("crewai", "crewai")

from crewai.agents.constants import ACTION_INPUT_REGEX  # noqa: E402
from crewai.agents.parser import AgentAction, parse  # noqa: E402
from crewai.hooks.llm_hooks import get_after_llm_call_hooks, register_after_llm_call_hook  # noqa: E402
from crewai.tools import BaseTool  # noqa: E402

__all__ = ["CREWAI_METADATA", "GatedCrewTool", "WorldAgent", "WorldCrewTool", "gated_tools", "recording", "world_tools"]

CREWAI_METADATA = "security_context"


class _AnyArguments(BaseModel):
    """An arguments model that keeps what it is given and shows groundeval's schema."""

    model_config = ConfigDict(extra="allow")
    declared: ClassVar[dict[str, Any]] = {}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return json.loads(json.dumps(cls.declared))


def _arguments_model(gated: GatedTool | WorldTool) -> type[BaseModel]:
    return type(f"{gated.name}_arguments", (_AnyArguments,), {"declared": gated.parameters})


class GatedCrewTool(BaseTool):
    """One gated tool as a CrewAI tool; build them with :func:`gated_tools`."""

    _gated: GatedTool = PrivateAttr()

    def __init__(self, gated: GatedTool | WorldTool):
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
    """``Agent(..., tools=gated_tools(episode))``: the episode's tools for its mode; every action
    the agent's model writes is recorded as written."""
    return world_tools(episode)


class _Sent:
    """The tools' episode, and the reply to the model's last action, recorded as sent, until a
    tool hands it back."""

    def __init__(self, episode: Any) -> None:
        self.episode = episode
        self.reply: str | None = None

    def take(self) -> str | None:
        reply, self.reply = self.reply, None
        return reply


class WorldCrewTool(GatedCrewTool):
    """One world tool (or ``say_to_user``) as a CrewAI tool; build them with :func:`world_tools`."""

    _sent: _Sent = PrivateAttr()

    def __init__(self, tool: WorldTool | GatedTool, sent: _Sent):
        super().__init__(tool)
        self._sent = sent

    def _run(self, **arguments: Any) -> str:
        arguments.pop(CREWAI_METADATA, None)
        reply = self._sent.take()  # the call as the model wrote it, already recorded by the hook
        return reply if reply is not None else self._gated.text(arguments)


def world_tools(episode: Any, *, say_to_user: bool = True) -> list[WorldCrewTool]:
    """``Agent(..., tools=world_tools(episode))``: a world episode's tools (and ``say_to_user``);
    a pack question episode gets its tools for its mode, as :func:`gated_tools`. Every action
    the agent's model writes is recorded as written."""
    _install()
    sent = _Sent(episode)
    if isinstance(episode, Episode):
        return [WorldCrewTool(g, sent) for g in _core_tools(episode)]
    return [WorldCrewTool(t, sent) for t in _core_world_tools(episode, say_to_user=say_to_user)]


def _held(context: Any) -> _Sent | None:
    """The recording of the groundeval tools the responding agent holds (for this task), if any."""
    executor = getattr(context, "executor", None)
    pools = [getattr(executor, "original_tools", None), getattr(executor, "tools", None)]
    pools += [getattr(getattr(context, "agent", None), "tools", None)]
    for pool in pools:
        for tool in pool or []:
            tool = getattr(tool, "_original_tool", None) or tool
            if isinstance(tool, WorldCrewTool):
                return tool._sent
    return None


def _after_llm_call(context: Any) -> None:
    """CrewAI's after_llm_call hook: the action the model wrote goes to the episode as written."""
    sent = _held(context)
    if sent is None:
        return None
    sent.reply = None
    text = context.response if isinstance(context.response, str) else ""
    try:
        action = parse(text)
    except Exception:  # CrewAI answers text it cannot read with its own format reminder
        return None
    match = ACTION_INPUT_REGEX.search(text)
    if isinstance(action, AgentAction) and match is not None:
        sent.reply = reply_text(world_call(sent.episode, action.tool, match.group(2).strip()))
    return None


def _install() -> None:
    """Register the hook once (again, if someone cleared CrewAI's hooks meanwhile)."""
    if _after_llm_call not in get_after_llm_call_hooks():
        register_after_llm_call_hook(_after_llm_call)


@contextmanager
def recording(episode: Any, agent: Any, tools: list[WorldCrewTool]) -> Iterator[None]:
    """Deprecated: the tools record every action without it. Kept so older code runs unchanged."""
    warnings.warn(
        "groundeval.adapters.crewai.recording is no longer needed: the tools record every action",
        DeprecationWarning,
        stacklevel=3,
    )
    _install()
    yield


TASK = "{policy}\n\nThe conversation so far:\n{conversation}\n\nAct on the user's last message, then reply to them."


class WorldAgent(FrameworkWorldAgent):
    """A world agent from ``build(tools, episode) -> crewai.Agent``: one crew kickoff per user
    message (a task holding the world's policy and the conversation so far); the crew's final
    answer is said to the user."""

    def turns(self, episode: Any) -> Callable[[str], Any]:
        from crewai import Crew, Task

        tools = world_tools(episode, say_to_user=self.say_to_user)
        agent = self.build(tools, episode)
        conversation: list[str] = []

        def turn(text: str) -> Any:
            conversation.append(f"User: {text}")
            task = Task(
                description=TASK.format(policy=episode.policy, conversation="\n".join(conversation)),
                expected_output="Your reply to the user.",
                agent=agent,
            )
            out = Crew(agents=[agent], tasks=[task], verbose=False).kickoff().raw
            conversation.append(f"Agent: {out}")
            return out

        return turn
