"""A subset of a question set: by track, bucket, id pattern, then the first N (``run`` / ``eval``
``--track``, ``--bucket``, ``--question-id``, ``--limit``).

Deterministic: the questions keep the set's own order (the generator's, or the file's), so the
same set and the same options select the same questions, on any machine. A selection that names
something the set does not hold is a usage error naming what it does hold, never an empty run.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..errors import UsageError
from .model import QuestionSet


@dataclass(frozen=True)
class Subset:
    """Which questions to run. Each non-empty filter must match (track AND bucket AND id); within
    one filter any value may (``--track silence --track perspective``). ``question_ids`` are
    shell-style patterns (``q_0a*``; an exact id matches itself). ``limit`` keeps the first N
    selected questions in the set's order."""

    tracks: tuple[str, ...] = ()
    buckets: tuple[str, ...] = ()
    question_ids: tuple[str, ...] = ()
    limit: int | None = None

    def __bool__(self) -> bool:
        return bool(self.tracks or self.buckets or self.question_ids or self.limit is not None)

    def describe(self) -> dict[str, object]:
        """The selection as data (for ``run.json``), only what was given."""
        out: dict[str, object] = {}
        for key in ("tracks", "buckets", "question_ids"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        if self.limit is not None:
            out["limit"] = self.limit
        return out

    def apply(self, qs: QuestionSet) -> QuestionSet:
        """``qs`` with only the selected questions (``qs`` itself when nothing is selected)."""
        if not self:
            return qs
        if self.limit is not None and self.limit < 1:
            raise UsageError.single("--limit", f"must be at least 1, got {self.limit}")
        _known("--track", self.tracks, sorted({q.track for q in qs.questions}))
        _known("--bucket", self.buckets, sorted({q.bucket for q in qs.questions}))
        for pattern in self.question_ids:
            if not any(fnmatchcase(q.id, pattern) for q in qs.questions):
                raise UsageError.single("--question-id", f"{pattern!r} matches no question of the set")
        chosen = [
            q
            for q in qs.questions
            if (not self.tracks or q.track in self.tracks)
            and (not self.buckets or q.bucket in self.buckets)
            and (not self.question_ids or any(fnmatchcase(q.id, p) for p in self.question_ids))
        ]
        if not chosen:
            raise UsageError.single("--track/--bucket/--question-id", "together they select no question")
        if self.limit is not None:
            chosen = chosen[: self.limit]
        return QuestionSet(metadata=qs.metadata, questions=chosen)


def _known(option: str, given: tuple[str, ...], present: list[str]) -> None:
    unknown = [v for v in given if v not in present]
    if unknown:
        raise UsageError.single(
            option, f"{', '.join(map(repr, unknown))} is not in the question set; it holds {', '.join(present)}"
        )
