"""OpenAI Agents SDK: the episode's tools as ``agents.FunctionTool`` objects, and the run that
records every call the model makes.

The SDK hands a tool the model's arguments as JSON text; they go to the episode unparsed by
the SDK, so a malformed call is recorded rather than refused before the episode sees it.
Schemas are declared non-strict: strict mode would rewrite them (every argument required),
and the model must see what groundeval serves.

A tool name the agent does not have is answered by the SDK, not by a tool: by default it
aborts the run (``ModelBehaviorError``) and the call never reaches the episode. No tool can
change that; the run's configuration can. So run the agent with :func:`run_sync` (or
:func:`run`), which take ``Runner.run_sync``'s arguments and install the recording itself:
:class:`WorldCalls` (run hooks keeping each response's calls by id, after any hooks of your
own) and :func:`world_run_config` (``tool_not_found_behavior="return_error_to_model"`` and a
``tool_error_formatter`` that sends such a call to the episode as it was sent; the model reads
the episode's reply). The episode is the one whose tools the agent holds, a pack question
episode (:func:`gated_tools`) or a world episode (:func:`world_tools`).

:class:`RunRecorder` is the other direction: a processor for the SDK's own tracing hook that
keeps each run's function-tool calls as an observed run (``groundeval.observe``), which
:func:`groundeval.adapters.observed.trace_from_run` replays into a trace.

Worlds: :func:`world_tools` (the world's tools and ``say_to_user``) and :class:`WorldAgent`,
which runs the agent once per user message through the same recording, keeping the history
(``result.to_input_list()``).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any

from ..errors import UsageError
from ..observe.model import ObservedCall, ObservedRun
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

require("openai-agents", "agents")

from agents import (  # noqa: E402
    AgentSpanData,
    FunctionSpanData,
    FunctionTool,
    RunConfig,
    RunHooks,
    Runner,
    TracingProcessor,
)

__all__ = [
    "RunRecorder",
    "WorldAgent",
    "WorldCalls",
    "gated_tools",
    "run",
    "run_sync",
    "world_run_config",
    "world_tools",
]
RAW_KEY = "_raw"  # groundeval.observe's key for arguments that are not a JSON object
EPISODE_ATTRIBUTE = "_groundeval_episode"  # set on each FunctionTool built here: the episode it serves
RECORDS = "_groundeval_records"  # set on world_run_config's formatter


def _function_tool(gated: GatedTool | WorldTool) -> FunctionTool:
    async def invoke(context: Any, arguments: str) -> str:
        config = getattr(context, "run_config", None)
        formatter = getattr(config, "tool_error_formatter", None)
        if config is not None and not getattr(formatter, RECORDS, False):
            warn_unrecorded(
                gated.episode,
                "an OpenAI Agents SDK run without groundeval.adapters.openai_agents.run_sync (or "
                "world_run_config): a tool name the agent lacks aborts the run and is not recorded",
            )
        return gated.text(arguments)

    out = FunctionTool(
        name=gated.name,
        description=gated.description,
        params_json_schema=gated.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
    setattr(out, EPISODE_ATTRIBUTE, gated.episode)
    return out


def gated_tools(episode: Episode) -> list[FunctionTool]:
    """``Agent(tools=gated_tools(episode), ...)``: the episode's tools for its mode; run the agent
    with :func:`run_sync` / :func:`run` so unknown tool names are recorded too."""
    return [_function_tool(g) for g in _core_tools(episode)]


def world_tools(episode: Any, *, say_to_user: bool = True) -> list[FunctionTool]:
    """``Agent(tools=world_tools(episode), instructions=episode.policy, ...)``: a world
    episode's tools (and ``say_to_user``); run the agent with :func:`run_sync` / :func:`run` (or
    :class:`WorldAgent`) so unknown tool names are recorded too."""
    return [_function_tool(t) for t in _core_world_tools(episode, say_to_user=say_to_user)]


class WorldCalls(RunHooks):
    """Run hooks that keep every function call the model sent (by call id), so a call to a tool
    the agent does not have reaches the episode with its arguments (:meth:`not_found`, the
    run's ``tool_error_formatter``). ``episode``: a world episode or a pack question episode."""

    def __init__(self, episode: Any):
        self.episode = episode
        self._sent: dict[str, tuple[str, Any]] = {}

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        for item in getattr(response, "output", None) or []:
            if getattr(item, "type", None) == "function_call":
                self._sent[item.call_id] = (item.name, item.arguments)

    def not_found(self, error: Any) -> str | None:
        if error.kind != "tool_not_found":
            return None
        name, arguments = self._sent.get(error.call_id, (error.tool_name, None))
        return reply_text(world_call(self.episode, name, arguments))


def world_run_config(calls: WorldCalls, run_config: RunConfig | dict[str, Any] | None = None) -> RunConfig:
    """``run_config`` (or a default one) answering unknown tool names through the episode; a
    ``tool_error_formatter`` of its own still formats every other kind of tool error."""
    if isinstance(run_config, dict):
        run_config = RunConfig(**run_config)
    base = run_config if run_config is not None else RunConfig()
    own = base.tool_error_formatter

    def formatter(error: Any) -> Any:
        if error.kind == "tool_not_found" or own is None:
            return calls.not_found(error)
        return own(error)

    setattr(formatter, RECORDS, True)
    return dataclasses.replace(base, tool_not_found_behavior="return_error_to_model", tool_error_formatter=formatter)


class _ChainedCalls(WorldCalls):
    """:class:`WorldCalls` that also runs the caller's own run hooks (theirs first)."""

    def __init__(self, episode: Any, hooks: RunHooks):
        super().__init__(episode)
        self.hooks = hooks


def _chain(name: str) -> Callable[..., Any]:
    async def method(self: _ChainedCalls, *args: Any, **kwargs: Any) -> None:
        await getattr(self.hooks, name)(*args, **kwargs)
        await getattr(WorldCalls, name)(self, *args, **kwargs)

    return method


for _name in [n for n in dir(RunHooks) if n.startswith("on_")]:
    setattr(_ChainedCalls, _name, _chain(_name))


def _episode_of(agent: Any) -> Any:
    """The one episode whose tools ``agent`` (or an agent it can hand off to) holds, else None."""
    found: list[Any] = []
    seen: set[int] = set()
    todo = [agent]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for tool in getattr(current, "tools", None) or []:
            episode = getattr(tool, EPISODE_ATTRIBUTE, None)
            if episode is not None and not any(episode is e for e in found):
                found.append(episode)
        for handoff in getattr(current, "handoffs", None) or []:
            todo.append(getattr(handoff, "agent", handoff))  # an Agent, or a Handoff naming none
    if len(found) > 1:
        raise UsageError.single("agent", "the agent holds the tools of more than one groundeval episode")
    return found[0] if found else None


def _recorded(agent: Any, kwargs: dict[str, Any], episode: Any) -> dict[str, Any]:
    episode = episode if episode is not None else _episode_of(agent)
    if episode is None:
        return kwargs
    hooks = kwargs.get("hooks")
    calls = WorldCalls(episode) if hooks is None else _ChainedCalls(episode, hooks)
    out = {**kwargs, "hooks": calls, "run_config": world_run_config(calls, kwargs.get("run_config"))}
    # the episode's step budget ends the run, not the SDK's default of 10 turns: each call and a message
    out.setdefault("max_turns", 2 * episode.max_steps + 2)
    return out


def run_sync(agent: Any, input: Any, *, episode: Any = None, **kwargs: Any) -> Any:
    """``Runner.run_sync(agent, input, **kwargs)`` with every call the model makes recorded in the
    episode whose tools the agent holds (or ``episode``), an unknown tool name included: the
    run's ``hooks`` and ``run_config`` (yours, if given) are extended as :func:`world_run_config`
    says, and ``max_turns`` defaults to what the episode's step budget allows (a call per turn
    and a message between each), not the SDK's 10. Returns the SDK's ``RunResult``."""
    return Runner.run_sync(agent, input, **_recorded(agent, kwargs, episode))


async def run(agent: Any, input: Any, *, episode: Any = None, **kwargs: Any) -> Any:
    """:func:`run_sync` for a running event loop (``await Runner.run(...)``)."""
    return await Runner.run(agent, input, **_recorded(agent, kwargs, episode))


class WorldAgent(FrameworkWorldAgent):
    """A world agent from ``build(tools, episode) -> agents.Agent`` (give it
    ``instructions=episode.policy``): one :func:`run_sync` per user message, the history
    kept; its final output is said to the user (``groundeval.adapters.core.converse``)."""

    def __init__(
        self,
        build: Callable[[list[FunctionTool], Any], Any],
        *,
        name: str = "openai-agents",
        say_to_user: bool = True,
        max_turns: int = 40,
        run_config: RunConfig | None = None,
    ):
        super().__init__(build, name=name, say_to_user=say_to_user, max_turns=max_turns)
        self.run_config = run_config

    def turns(self, episode: Any) -> Callable[[str], Any]:
        agent = self.build(world_tools(episode, say_to_user=self.say_to_user), episode)
        calls = WorldCalls(episode)
        config = world_run_config(calls, self.run_config)
        history: list[Any] = []

        def turn(text: str) -> Any:
            nonlocal history
            result = Runner.run_sync(
                agent,
                [*history, {"role": "user", "content": text}],
                hooks=calls,
                run_config=config,
                max_turns=2 * episode.max_steps + 2,  # as run_sync: every call and a message between each
            )
            history = result.to_input_list()
            return result.final_output

        return turn


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


class RunRecorder(TracingProcessor):
    """Keeps every traced run's function-tool calls (name, arguments, result, error, agent) as
    an :class:`ObservedRun`, one per SDK trace. Register it with ``agents.add_trace_processor``
    (or ``set_trace_processors([recorder])`` to send traces nowhere else); tracing must be on
    with sensitive data included (the SDK's defaults), or the calls carry no arguments."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._agents: dict[str, str] = {}  # span id -> agent name
        self._parents: dict[str, str | None] = {}  # span id -> parent span id
        self._runs: dict[str, ObservedRun] = {}

    @property
    def runs(self) -> list[ObservedRun]:
        """The runs seen so far, in the order they started."""
        with self._lock:
            return [r.model_copy(deep=True) for r in self._runs.values()]

    def on_trace_start(self, trace: Any) -> None:
        with self._lock:
            self._runs[trace.trace_id] = ObservedRun(run_id=trace.trace_id, source="openai-agents")

    def on_trace_end(self, trace: Any) -> None:
        pass

    def on_span_start(self, span: Any) -> None:
        with self._lock:
            self._parents[span.span_id] = span.parent_id
            if isinstance(span.span_data, AgentSpanData):
                self._agents[span.span_id] = span.span_data.name

    def _agent(self, span_id: str | None) -> str | None:
        seen: set[str] = set()
        while span_id and span_id not in seen:
            seen.add(span_id)
            if span_id in self._agents:
                return self._agents[span_id]
            span_id = self._parents.get(span_id)
        return None

    def on_span_end(self, span: Any) -> None:
        data = span.span_data
        if not isinstance(data, FunctionSpanData):
            return
        with self._lock:
            run = self._runs.setdefault(span.trace_id, ObservedRun(run_id=span.trace_id, source="openai-agents"))
            agent = self._agent(span.parent_id)
            if agent and agent not in run.agents:
                run.agents.append(agent)
            arguments = _json(data.input)
            if data.input is not None and not isinstance(arguments, dict):
                arguments = {RAW_KEY: data.input}
            error = (span.error or {}).get("message")
            run.calls.append(
                ObservedCall(
                    index=len(run.calls),
                    tool=data.name,
                    agent=agent,
                    arguments=arguments or {},
                    result=_json(data.output),
                    status="error" if error else "ok",
                    error=error,
                    span_id=span.span_id,
                )
            )

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass
