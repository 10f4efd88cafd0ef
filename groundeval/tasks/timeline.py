"""The run timeline: an observed run's calls in order, summarised, with the violations the
task contract found marked on the call that broke the rule. Plain dicts, ready for the HTML
report's ``observed_timeline.html.j2`` partial (and readable as JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..observe.model import ObservedRun
from .model import TaskContract
from .score import TaskScore

__all__ = ["SUMMARY_CHARS", "summarise", "timeline", "timelines"]

SUMMARY_CHARS = 160


def summarise(value: Any, limit: int = SUMMARY_CHARS) -> str:
    """Compact JSON of ``value`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def timeline(contract: TaskContract, run: ObservedRun, score: TaskScore) -> dict[str, Any]:
    by_call: dict[int, list[str]] = {}
    for v in score.violations:
        if v.call_index is not None:
            by_call.setdefault(v.call_index, []).append(f"{v.cls}: {v.message}")
    calls = [
        {
            "index": c.index,
            "agent": c.agent or "",
            "role": contract.role_of(c.agent) or "no role",
            "tool": c.tool,
            "arguments": summarise(c.arguments),
            "result": summarise(c.result),
            "status": c.status,
            "error": c.error or "",
            "violations": by_call.get(c.index, []),
        }
        for c in run.calls
    ]
    return {
        "run_id": run.run_id,
        "task": score.task,
        "failure_class": score.failure_class,
        "failures": score.failures,
        "s_adj": f"{score.s_adj:.3f}",
        "v": f"{score.violation_rate:.3f}",
        "reviewed": score.reviewed,
        "calls": calls,
        "run_violations": [f"{v.cls}: {v.message}" for v in score.violations if v.call_index is None],
        "final_answer": summarise(run.final_answer, 400) if run.final_answer is not None else "",
        "problems": [f"{p.where}: {p.message}" for p in run.problems],
    }


def timelines(contract: TaskContract, runs: Sequence[ObservedRun], scores: Sequence[TaskScore]) -> list[dict[str, Any]]:
    return [timeline(contract, r, s) for r, s in zip(runs, scores)]
