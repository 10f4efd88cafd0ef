"""OpenAI Agents SDK: the episode's tools as ``agents.FunctionTool`` objects.

The SDK hands a tool the model's arguments as JSON text; they go to the episode unparsed by
the SDK, so a malformed call is recorded rather than refused before the episode sees it.
Schemas are declared non-strict: strict mode would rewrite them (every argument required),
and the model must see what groundeval serves.

:class:`RunRecorder` is the other direction: a processor for the SDK's own tracing hook that
keeps each run's function-tool calls as an observed run (``groundeval.observe``), which
:func:`groundeval.adapters.observed.trace_from_run` replays into a trace.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from ..observe.model import ObservedCall, ObservedRun
from ..runtime.episode import Episode
from .core import GatedTool, gated_tools as _core_tools, require

require("openai-agents", "agents")

from agents import AgentSpanData, FunctionSpanData, FunctionTool, TracingProcessor  # noqa: E402

__all__ = ["RunRecorder", "gated_tools"]
RAW_KEY = "_raw"  # groundeval.observe's key for arguments that are not a JSON object


def _function_tool(gated: GatedTool) -> FunctionTool:
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
