"""Scores on disk (``scores.jsonl``) and re-scoring saved traces without any agent.

Lines are canonical JSON (sorted keys, compact) so identical scores are identical bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from ..contract.models import ScoringConfig
from ..errors import ContractError
from ..questions.model import Question, QuestionSet
from ..trace.model import Trace
from .model import QuestionScore
from .score import score

SCORES_FILE = "scores.jsonl"


def score_line(s: QuestionScore) -> str:
    return json.dumps(s.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def write_scores(path: str | Path, scores: list[QuestionScore]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(score_line(s) + "\n" for s in scores), encoding="utf-8")
    tmp.replace(path)
    return path


def _located(path: Path, n: int, exc: ValidationError) -> ContractError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or None
    return ContractError.single(str(path), err.get("msg", "invalid record"), line=n, field=field)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    if not path.is_file():
        raise ContractError.single(str(path), "no such file")
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                yield n, line


def read_scores(path: str | Path) -> list[QuestionScore]:
    """Every score of a ``scores.jsonl`` file (or of a folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / SCORES_FILE
    out = []
    for n, line in _lines(path):
        try:
            out.append(QuestionScore.model_validate_json(line))
        except ValidationError as exc:
            raise _located(path, n, exc) from None
    return out


def read_question_set(path: str | Path) -> QuestionSet:
    """A ``questions.json`` file, with a located error for bad input."""
    path = Path(path)
    if not path.is_file():
        raise ContractError.single(str(path), "no such questions file")
    try:
        return QuestionSet.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        raise ContractError.single(str(path), err.get("msg", "invalid questions file"), field=field) from None


def iter_rescore(traces_path: str | Path, questions: dict[str, Question],
                 config: ScoringConfig | None = None) -> Iterator[tuple[Trace, QuestionScore | None]]:
    """Parse and score each trace line; a trace of an unknown question yields ``None``."""
    path = Path(traces_path)
    for n, line in _lines(path):
        try:
            trace = Trace.model_validate_json(line)
        except ValidationError as exc:
            raise _located(path, n, exc) from None
        q = questions.get(trace.question_id)
        yield trace, (score(q, trace, config) if q is not None else None)
