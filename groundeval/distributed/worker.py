"""What a worker holds and does, with no Ray in it: the backends wrap these classes.

What is shipped to a worker, once, when it starts:

* :class:`StoreSpec` — the path of the contract's DuckDB file (``--db``) and its digest.
  The worker opens it **read-only** and refuses a file holding another contract; it never
  loads the pack itself. The file is prepared by the driver first (BM25 index and search
  tables built in), since a read-only store cannot build them.
* :class:`AgentSpec` — how to make the agent: a spec the registry understands
  (``oracle``, ``openai:<model>``, ``module:factory`` + options), built on the worker, or a
  pickled agent object. An agent object that cannot be pickled is refused on the driver.
* for scoring, the questions (by id), the scoring configuration and profile.

Per episode only the question, trial and seed travel; per scoring chunk only the traces
or trace lines. What comes back — traces, scores, located errors — is merged in question
(or line) order by the driver, so outputs do not depend on which worker ran what.
"""

from __future__ import annotations

import os
import pickle
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ContractError, GroundevalError
from ..scoring.parallel import TraceHead


def prepare_store_file(store: Any) -> str:
    """Build into ``store``'s DuckDB file what a read-only store cannot build for itself (the BM25
    index and the search tables), write it out and close the store; returns its digest.
    After this the file can be opened read-only by any number of processes at once."""
    from ..runtime.search_sql import ensure_search_tables

    ensure_search_tables(store)
    digest = store.digest
    store.con.execute("CHECKPOINT")
    store.close()
    return digest


@dataclass(frozen=True)
class StoreSpec:
    """The contract's DuckDB file as every worker opens it (read-only) and the digest it must hold."""

    db: str
    digest: str

    def open(self) -> Any:
        from ..store.store import Store

        if not Path(self.db).is_file():
            raise ContractError.single(
                self.db,
                f"no such store file on worker {socket.gethostname()} (the "
                "--db file must be on storage every node mounts at the same path)",
            )
        store = Store.open_db(self.db)
        if store.digest != self.digest:
            actual = store.digest
            store.close()
            raise ContractError.single(
                self.db,
                f"holds contract {actual[:12]} on worker {socket.gethostname()}, the run's is {self.digest[:12]}",
            )
        return store


@dataclass(frozen=True)
class AgentSpec:
    """An agent as a worker rebuilds it: by ``name`` through the registry, or unpickled."""

    name: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    pickled: bytes | None = None

    def build(self) -> Any:
        if self.pickled is not None:
            return pickle.loads(self.pickled)
        from ..agents.registry import get_agent

        assert self.name is not None
        return get_agent(self.name, **self.options)


class KeepsSetupError:
    """A worker whose set-up failed keeps the error (``error``) and raises it from :meth:`ready`,
    which the driver asks every worker before the first job: a bad setup is one located error
    before anything runs."""

    error: Exception | None = None

    def ready(self) -> str:
        """Where this worker runs, or the error that keeps it from starting."""
        if self.error is not None:
            raise self.error
        return f"{socket.gethostname()}:{os.getpid()}"


class EpisodeWorker(KeepsSetupError):
    """Runs episodes on its own read-only store with its own agent (one per worker process;
    concurrent episodes within it each get their own cursor, as in the local runner).

    A worker that cannot start (store file missing or of another contract, agent module not
    importable) keeps the error and raises it from :meth:`ready` — the driver asks every
    worker first, so a bad setup is one located error before any episode runs."""

    def __init__(self, store: StoreSpec, agent: AgentSpec):
        self.error: Exception | None = None
        try:
            self.store = store.open()
            self.agent = agent.build()
        except Exception as exc:  # noqa: BLE001 - raised from ready(), where the driver reports it
            self.error = exc

    def run(
        self, question: Any, *, mode: str, max_steps: int, timeout: float | None, trial: int, seed: int | None
    ) -> Any:
        from ..agents.runner import run_episode

        if self.error is not None:
            raise self.error
        return run_episode(
            self.store, question, self.agent, mode=mode, max_steps=max_steps, timeout=timeout, trial=trial, seed=seed
        )


@dataclass
class LinesResult:
    """A scored chunk of trace lines: ``rows`` = (line number, head, score or None) for every line
    before ``error``, the first located problem in the chunk (parsing or contract digest)."""

    rows: list[tuple[int, TraceHead, Any]]
    error: GroundevalError | None = None


class ScoreWorker:
    """Scores traces (objects or lines) against the questions it was given once."""

    def __init__(
        self,
        questions: dict[str, Any],
        config: Any,
        profile: str | None,
        contract_digest: str | None = None,
        path: str = "traces",
    ):
        self.questions = questions
        self.config = config
        self.profile = profile
        self.digest = contract_digest
        self.path = path

    def ready(self) -> str:
        return f"{socket.gethostname()}:{os.getpid()}"

    def score_traces(self, traces: list[Any]) -> list[Any]:
        """Scores in the order of ``traces`` (every trace's question is known)."""
        from ..scoring.profiles import score

        return [score(self.questions[t.question_id], t, self.config, self.profile) for t in traces]

    def score_lines(self, lines: list[tuple[int, bytes]]) -> LinesResult:
        """Each line parsed, checked and scored exactly as ``scoring.io.iter_rescore_lines`` does."""
        from ..scoring.lines import check_trace_line, rescore_trace

        rows: list[tuple[int, TraceHead, Any]] = []
        for n, line in lines:
            try:
                trace = check_trace_line(self.path, n, line, self.digest)
            except GroundevalError as exc:
                return LinesResult(rows, exc)
            rows.append((n, TraceHead.of(trace), rescore_trace(trace, self.questions, self.config, self.profile)))
        return LinesResult(rows)


CHUNK_BYTES = 8 * 2**20  # a scoring chunk holds at most this many bytes of trace lines (or one longer line)


def line_chunks(lines: Iterable[tuple[int, bytes]], size: int) -> Iterator[list[tuple[int, bytes]]]:
    """``(line number, line)`` pairs in file order, cut into chunks of ``size`` lines (fewer past CHUNK_BYTES)."""
    chunk: list[tuple[int, bytes]] = []
    held = 0
    for item in lines:
        chunk.append(item)
        held += len(item[1])
        if len(chunk) >= size or held >= CHUNK_BYTES:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


def merge_lines(
    path: str | Path, done: Iterable[tuple[list[tuple[int, bytes]], LinesResult]]
) -> Iterator[tuple[TraceHead, Any, bytes]]:
    """Scored chunks, in file order, back into ``iter_rescore_lines``'s stream: (head, score or None,
    line) per line, a repeated trace located at its second line, and a chunk's error raised after
    the lines before it — so the first error is the one a sequential pass meets first."""
    from ..trace.io import TraceKeys

    keys = TraceKeys(path)
    for chunk, result in done:
        for (n, head, s), (_n, line) in zip(result.rows, chunk):
            keys.add(head, n)
            yield head, s, line
        if result.error is not None:
            raise result.error
