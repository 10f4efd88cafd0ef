"""A framework run captured by its own tracing, as a groundeval trace.

A run recorded only through a framework's tracing hook (OpenTelemetry GenAI / OpenInference
spans, imported by :mod:`groundeval.observe` as an :class:`~groundeval.observe.ObservedRun`)
names each tool call with its arguments. When those calls are groundeval's gated tools, the
gated runtime is deterministic for a contract, a question and its moment, so replaying them
through an :class:`Episode` in order rebuilds the trace the run would have left: the same
statuses, result ids, gate flags and submissions, scored like any other trace. Calls to
other tools are kept as narration (never scored), so a run that mixed in its own tools still
replays its gated part.
"""

from __future__ import annotations

from typing import Any

from ..runtime.episode import Episode
from ..runtime.tools import EPISODE_TOOLS

__all__ = ["GATED_TOOL_NAMES", "trace_from_run"]

GATED_TOOL_NAMES = frozenset(t.name for t in EPISODE_TOOLS)
RAW_KEY = "_raw"  # groundeval.observe's key for arguments that were not a JSON object


def _arguments(arguments: dict[str, Any]) -> Any:
    # arguments the recording could not read as an object go to the episode as the text they were
    return arguments[RAW_KEY] if set(arguments) == {RAW_KEY} else arguments


def trace_from_run(store, question, run, *, mode: str = "tool", agent: str | None = None, max_steps: int = 30) -> Any:
    """Replay ``run``'s gated calls (an ``ObservedRun``) for ``question`` and return the trace."""
    name = agent if agent is not None else (run.agents[0] if run.agents else None)
    with Episode(store, question, mode=mode, agent=name, max_steps=max_steps) as ep:
        for call in run.calls:
            if call.tool in GATED_TOOL_NAMES:
                ep.call(call.tool, _arguments(call.arguments))
            else:
                ep.note({"role": "tool", "content": f"{call.tool} (not a groundeval tool; not replayed)"})
    return ep.trace
