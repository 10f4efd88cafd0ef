"""The backend protocol — where episodes run and traces are scored — and the local backend.

A backend changes *where* work happens, never *what* comes out: the runner's bookkeeping
(resume, run.json, question order of ``traces.jsonl``) and the aggregate/report are the
same code for every backend, and each backend scores with the same pure function, so
traces, scores and reports are the same bytes whichever backend produced them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable


BACKENDS = ("local", "ray")


@dataclass
class Episodes:
    """How a run's episodes execute: ``run_questions(store, ..., agent, concurrency=concurrency,
    execute=execute)`` (``execute`` None = in this process)."""

    store: Any
    agent: Any
    concurrency: int
    execute: Callable[..., Any] | None = None
    workers: int = 1


@runtime_checkable
class Backend(Protocol):
    name: str

    def store_file(self, db: str | Path | None) -> Path | None:
        """The DuckDB file a run's store is loaded into (None: in memory)."""
        ...

    def episodes(
        self,
        store: Any,
        agent: Any,
        *,
        db: str | Path | None,
        spec: str | None,
        options: dict[str, Any] | None,
        concurrency: int,
    ) -> Any:
        """A context manager yielding :class:`Episodes` for a run on ``store`` (loaded into ``db``,
        the :meth:`store_file`); ``spec`` + ``options`` name the agent when it was given by name."""
        ...

    def score(self, questions: Any, traces: list[Any], config: Any = None, profile: str | None = None) -> list[Any]:
        """Every trace scored, in question order then trial order (see :func:`pairs_in_order`)."""
        ...

    def rescore(
        self,
        path: str | Path,
        questions: dict[str, Any],
        config: Any = None,
        *,
        contract_digest: str | None = None,
        profile: str | None = None,
    ) -> Iterator[tuple[Any, Any, bytes]]:
        """``scoring.io.iter_rescore_lines``: (trace or its head, score or None, line) in file order."""
        ...

    def close(self) -> None: ...


def pairs_in_order(questions: Any, traces: list[Any]) -> list[tuple[Any, Any]]:
    """(question, trace) in question order then trial order; a question without a trace has none."""
    by_id: dict[str, list[Any]] = {}
    for t in traces:
        by_id.setdefault(t.question_id, []).append(t)
    return [(q, t) for q in questions.questions for t in sorted(by_id.get(q.id, []), key=lambda t: t.trial)]


class LocalBackend:
    """Everything in this process (episodes on threads, as ``--concurrency`` says): the default."""

    name = "local"

    def store_file(self, db: str | Path | None) -> Path | None:
        return None if db is None else Path(db)

    @contextmanager
    def episodes(
        self,
        store: Any,
        agent: Any,
        *,
        db: str | Path | None = None,
        spec: str | None = None,
        options: dict[str, Any] | None = None,
        concurrency: int = 1,
    ) -> Iterator[Episodes]:
        yield Episodes(store=store, agent=agent, concurrency=concurrency)

    def score(self, questions: Any, traces: list[Any], config: Any = None, profile: str | None = None) -> list[Any]:
        from ..scoring.profiles import score

        return [score(q, t, config, profile) for q, t in pairs_in_order(questions, traces)]

    def rescore(
        self,
        path: str | Path,
        questions: dict[str, Any],
        config: Any = None,
        *,
        contract_digest: str | None = None,
        profile: str | None = None,
    ) -> Iterator[tuple[Any, Any, bytes]]:
        from ..scoring.io import iter_rescore_lines

        return iter_rescore_lines(path, questions, config, contract_digest=contract_digest, profile=profile)

    def close(self) -> None:
        pass
