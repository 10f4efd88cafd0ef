"""OpenAI Agents SDK: the episode's tools as ``agents.FunctionTool`` objects.

The SDK hands a tool the model's arguments as JSON text; they go to the episode unparsed by
the SDK, so a malformed call is recorded rather than refused before the episode sees it.
Schemas are declared non-strict: strict mode would rewrite them (every argument required),
and the model must see what groundeval serves.

:class:`RunRecorder` is the other direction: a processor for the SDK's own tracing hook that
keeps each run's function-tool calls as an observed run (``groundeval.observe``), which
:func:`groundeval.adapters.observed.trace_from_run` replays into a trace.

Worlds: :func:`world_tools` (the world's tools and ``say_to_user``) and :class:`WorldAgent`,
which runs ``Runner.run_sync`` once per user message, keeping the history
(``result.to_input_list()``). A tool name the agent does not have is answered by the SDK, not
a tool: :class:`WorldCalls` (run hooks keeping each response's calls by id) with the run
configuration from :func:`world_run_config` (``tool_not_found_behavior="return_error_to_model"``
and a ``tool_error_formatter``) sends such a call to the episode as it was sent, and the model
reads the episode's reply. The same hooks and run configuration serve a pack question episode
(``Runner.run_sync(agent, text, hooks=calls, run_config=world_run_config(calls))`` with
``calls = WorldCalls(episode)``): without them the SDK aborts the run on an unknown tool name
and the call never reaches the trace.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any

from ..observe.model import ObservedCall, ObservedRun
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

__all__ = ["RunRecorder", "WorldAgent", "WorldCalls", "gated_tools", "world_run_config", "world_tools"]
RAW_KEY = "_raw"  # groundeval.observe's key for arguments that are not a JSON object


def _function_tool(gated: GatedTool | WorldTool) -> FunctionTool:
    async def invoke(_context: Any, arguments: str) -> str:
        return gated.text(arguments)

    return FunctionTool(
        name=gated.name,
        description=gated.description,
        params_json_schema=gated.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


def gated_tools(episode: Episode) -> list[FunctionTool]:
    """``Agent(tools=gated_tools(episode), ...)``: the episode's tools for its mode."""
    return [_function_tool(g) for g in _core_tools(episode)]


def world_tools(episode: Any, *, say_to_user: bool = True) -> list[FunctionTool]:
    """``Agent(tools=world_tools(episode), instructions=episode.policy, ...)``: a world
    episode's tools (and ``say_to_user``); run with :func:`world_run_config` so unknown tool
    names are recorded too."""
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


def world_run_config(calls: WorldCalls, run_config: RunConfig | None = None) -> RunConfig:
    """``run_config`` (or a default one) answering unknown tool names through the episode."""
    return dataclasses.replace(
        run_config if run_config is not None else RunConfig(),
        tool_not_found_behavior="return_error_to_model",
        tool_error_formatter=calls.not_found,
    )


class WorldAgent(FrameworkWorldAgent):
    """A world agent from ``build(tools, episode) -> agents.Agent`` (give it
    ``instructions=episode.policy``): one ``Runner.run_sync`` per user message, the history
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
                max_turns=2 * episode.max_steps + 2,  # every call and a message between each
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
