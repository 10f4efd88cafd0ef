"""Observe an agent where it lives: import a recorded run (OpenTelemetry GenAI /
OpenInference spans, or a groundeval trace) as an :class:`ObservedRun`. A task contract
drafted from observed runs for a person to review is the task contracts' business
(:mod:`groundeval.tasks.draft`)."""

from __future__ import annotations

from .io import read_runs, run_json, write_run
from .model import ImportProblem, ObservedCall, ObservedMessage, ObservedRun
from .otel import runs_from_spans

__all__ = [
    "ImportProblem",
    "ObservedCall",
    "ObservedMessage",
    "ObservedRun",
    "read_runs",
    "run_json",
    "runs_from_spans",
    "write_run",
]
