"""Reports over task runs: the same ``report.json`` / ``report.html`` as a question run.

Task scores become report rows (:func:`~groundeval.tasks.track.to_question_score`), so the
aggregates, compliance tier and tables are computed by the same code as for the tracks; the
HTML adds each observed run's timeline (the ``observed`` partial). ``scores.jsonl`` keeps
the task scores themselves (one canonical JSON line each). Deterministic: same inputs, same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..observe.model import ObservedRun
from .model import TaskContract
from .score import TaskScore
from .timeline import timelines

__all__ = ["run_report", "scores_jsonl", "write_task_reports"]


def run_report(scores: Sequence[TaskScore]):
    """A :class:`~groundeval.scoring.model.RunReport` over task scores (track ``task``)."""
    from ..contract.models import ScoringConfig
    from ..scoring.aggregate import group_stats
    from ..scoring.model import RunReport
    from .track import to_question_score

    rows = [to_question_score(s) for s in scores]
    cfg = ScoringConfig()
    overall = group_stats(rows, cfg)
    agents = sorted({a for s in scores for a in s.agents})
    return RunReport(
        agent=",".join(agents) or None,
        mode="observed",
        overall=overall,
        tracks={"task": overall},
        config={"task": scores[0].task if scores else None},
    ), rows


def scores_jsonl(scores: Sequence[TaskScore]) -> str:
    return "".join(
        json.dumps(s.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
        for s in scores
    )


def write_task_reports(
    contract: TaskContract, runs: Sequence[ObservedRun], scores: Sequence[TaskScore], out_dir: str | Path
) -> dict[str, Path]:
    """Write scores.jsonl, report.json and report.html (with the runs' timelines) into ``out_dir``."""
    from ..report.render import render_html, report_json

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    report, rows = run_report(scores)
    files = {
        "scores.jsonl": scores_jsonl(scores),
        "report.json": report_json(report),
        "report.html": render_html(report, scores=rows, observed=timelines(contract, runs, scores)),
    }
    paths = {}
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        paths[name] = out / name
    return paths
