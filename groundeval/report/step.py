"""The workflow's ``report`` step: aggregate scores into a run report and, given a folder,
write report.json/.md/.html there (``groundeval.report(...)``, :func:`groundeval.api.report`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..contract.models import ScoringConfig
    from ..questions.model import QuestionSet
    from ..scoring.model import QuestionScore, RunReport
    from ..trace.model import Trace


def report(
    questions: QuestionSet,
    traces: Sequence[Trace],
    scores: Sequence[QuestionScore],
    out_dir: str | Path | None = None,
    *,
    config: ScoringConfig | None = None,
    profile: str | None = None,
) -> RunReport:
    """Aggregate scores into a run report; with ``out_dir`` also write report.json/.md/.html there."""
    from ..scoring.aggregate import aggregate

    result = aggregate(
        questions.questions, traces, scores, seed=questions.metadata.seed, config=config, profile=profile
    )
    if out_dir is not None:
        from .render import write_reports

        write_reports(result, out_dir, questions=questions.questions, traces=traces, scores=scores)
    return result


__all__ = ["report"]
