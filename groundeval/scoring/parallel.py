"""Re-scoring a large traces file on every core, with the same results as one process.

Parsing a trace, scoring it and writing its score line take ~40 µs of Python per trace; one
process is bound to one core. Helper processes (``python -m groundeval.scoring.parallel``,
started from scratch: no ``fork`` of a process that may hold DuckDB threads, no re-import
of the caller's ``__main__``) receive the questions, config and profile once, then chunks
of ``(line number, line)``; each returns, per line, the fields the caller keeps of the
trace (:class:`TraceHead`) and the score's values. This process reads the file, hands the
chunks out, and — rather than wait while the chunk due next is still with its helper —
scores the following chunk itself; it checks the one-trace-per-key rule in file order and
yields in file order, so the output does not depend on who scored what. On an idle machine
it starts one helper fewer than the cores: it is a worker too.

Any problem in a chunk (a bad line, another contract's digest, a helper that fails) makes
this process score that chunk itself with :func:`~groundeval.scoring.io.score_lines`: the
located error raised is the one a single process raises, in its turn.
"""

from __future__ import annotations

import operator
import os
import select
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..gc_pause import collector_paused
from ..helper_process import HelperProcess, helpers_wanted, messages, reply

CHUNK = 1024  # trace lines per helper round trip
ENV = "GROUNDEVAL_SCORE_WORKERS"
MIN_BYTES = 16 * 1024 * 1024  # smaller files are scored here: helpers take ~0.5 s to start

HEAD_FIELDS = ("question_id", "track", "mode", "agent", "trial", "contract_digest", "usage")
TIMING_FIELDS = ("started", "ended", "total_ms", "call_latency_ms")


class TraceHead:
    """What the caller keeps of a re-scored trace (the fields :class:`~groundeval.scoring.io.TraceRef`
    copies); the line, kept by the caller, holds the rest. Helper processes and Ray's scoring
    workers send it back instead of the parsed trace."""

    FIELDS = (*HEAD_FIELDS, "timings")
    __slots__ = FIELDS

    @classmethod
    def of(cls, trace: Any) -> TraceHead:
        return _rebuild_head(*(getattr(trace, f) for f in cls.FIELDS))

    def __reduce__(self):
        return (_rebuild_head, tuple(getattr(self, f) for f in self.FIELDS))


def _rebuild_head(*values: Any) -> TraceHead:
    head = TraceHead.__new__(TraceHead)
    for f, v in zip(TraceHead.FIELDS, values):
        setattr(head, f, v)
    return head


def workers_wanted(path: Path) -> int:
    """Helper processes for re-scoring ``path`` (0 = in this process): one fewer than the cores
    :func:`~groundeval.helper_process.idle_cores` offers, this process scoring chunks too.
    ``GROUNDEVAL_SCORE_WORKERS`` overrides (0 turns helpers off)."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    wanted = helpers_wanted(ENV, size, MIN_BYTES)
    return wanted if ENV in os.environ else max(0, wanted - 1)


def _builders():
    """(trace reference, score) builders from the helpers' plain values, without validation:
    the values were validated (or computed) by the helper, as in one process."""
    from ..trace.model import TimingsStruct
    from .lines import TraceRef
    from .model import QuestionScore
    from .score import EVERY_FIELD

    new, setattr_, every = object.__new__, object.__setattr__, tuple(QuestionScore.model_fields)

    def head(values: tuple, span: tuple[str, int, int]) -> TraceRef:
        h = new(TraceRef)
        (h.question_id, h.track, h.mode, h.agent, h.trial, h.contract_digest, h.usage, timing) = values
        started, ended, total_ms, call_latency_ms = timing
        h.timings = TimingsStruct(started=started, ended=ended, total_ms=total_ms, call_latency_ms=call_latency_ms)
        h._line, h._full = span, None  # where the line is: read again when the drill-down needs it
        return h

    def score(values: tuple | None, fields_set: frozenset | None) -> Any:
        if values is None:
            return None
        s = new(QuestionScore)
        setattr_(s, "__dict__", dict(zip(every, values)))
        setattr_(s, "__pydantic_fields_set__", EVERY_FIELD if fields_set is None else set(fields_set))
        setattr_(s, "__pydantic_extra__", None)
        setattr_(s, "__pydantic_private__", None)
        return s

    return head, score


class _Helper(HelperProcess):
    """A re-scoring helper: the questions, config and profile once, then chunks of lines; a
    chunk's answer is its rows, or None for "a problem in this chunk" (and for a helper that stopped)."""

    def __init__(self) -> None:
        super().__init__("groundeval.scoring.parallel", ENV)

    def receive(self) -> list | None:
        try:
            return super().receive()
        except OSError:
            return None

    def ready(self) -> bool:
        """Whether its answer has arrived (reading it would not wait)."""
        try:
            return bool(select.select([self.proc.stdout], [], [], 0)[0])
        except (OSError, ValueError):  # no select on this pipe: read it, and wait
            return True


def rescore_parallel(
    path: Path,
    lines: Iterator[tuple[int, int, bytes]],
    questions: dict,
    config: Any,
    profile: str | None,
    contract_digest: str | None,
    workers: int,
) -> Iterator[tuple[Any, Any, bytes, int]]:
    """``(trace reference, score or None, line, line number)`` for every line of ``lines``
    (:func:`~groundeval.trace.io.iter_trace_spans`), in file order: chunks go to the
    ``workers`` helpers, and whenever the chunk due next is still with its helper, this process
    scores the following chunk itself (:func:`~groundeval.scoring.io.score_lines`) instead of
    waiting. A chunk a helper could not score is scored here. Any error (a bad line, one
    too long to read) is raised in its turn, after every line before it."""
    make_head, make_score = _builders()
    setup = (str(path), questions, config, profile, contract_digest)
    helpers: list[_Helper] = []
    try:
        try:
            helpers = [_Helper() for _ in range(workers)]  # all started first: their imports overlap
        except OSError:
            helpers = []
        queue = _Queue(_send_setup(helpers, setup), lines, lambda c: _score_here(path, c, *setup[1:]))
        where = str(path)
        while queue.due():
            chunk, h, done = queue.pending.popleft()
            if h is not None:
                rows = queue.answer(h)
                if rows is not None:
                    for (n, at, line), (head, values, fields_set) in zip(chunk, rows):
                        yield make_head(head, (where, at, len(line))), make_score(values, fields_set), line, n
                    continue
                done = queue.here(chunk)  # a problem in the chunk: scored here, raising what one process raises
            results, error = done
            yield from results
            if error is not None:
                raise error
    finally:
        for h in helpers:
            h.close()


class _Queue:
    """The chunks in file order (``pending``: [chunk, its helper or None, (results, error) when
    scored here]): every idle helper given the next chunk, and this process scoring the next
    one itself while the chunk due is still with its helper."""

    def __init__(self, helpers: list[_Helper], lines: Iterator, here: Any) -> None:
        self.idle = deque(helpers)
        self.chunks = _chunks(lines)
        self.here = here
        self.more = True
        self.pending: deque[list] = deque()

    def take(self) -> list | None:
        """The next chunk; None at the end (a read error then queued, raised in its turn)."""
        chunk = next(self.chunks, None) if self.more else None
        if type(chunk) is not list:
            self.more = False
            if chunk is not None:
                self.pending.append([[], None, ([], chunk)])
            return None
        return chunk

    def due(self) -> bool:
        """Whether a chunk is due, its answer at hand (or at least asked for)."""
        while True:
            while self.idle and (chunk := self.take()) is not None:
                h = self.idle.popleft()
                try:
                    h.send([(n, line) for n, _at, line in chunk])
                    self.pending.append([chunk, h, None])
                except OSError:
                    self.pending.append([chunk, None, self.here(chunk)])
            if not self.pending:
                if (chunk := self.take()) is None:
                    return bool(self.pending)
                self.pending.append([chunk, None, self.here(chunk)])
                continue
            h = self.pending[0][1]
            if h is None or h.ready() or (chunk := self.take()) is None:
                return True
            self.pending.append([chunk, None, self.here(chunk)])  # its helper is still at it

    def answer(self, h: _Helper) -> list | None:
        rows = h.receive()
        if h.alive():
            self.idle.append(h)  # alive: it answered, with rows or with "a problem in this chunk"
        return rows


def _chunks(lines: Iterator[tuple[int, int, bytes]]) -> Iterator[list | BaseException]:
    """``lines`` in chunks of :data:`CHUNK`; an error reading them on is the last item."""
    while True:
        try:
            chunk = [x for _, x in zip(range(CHUNK), lines)]
        except Exception as exc:  # noqa: BLE001 - e.g. a line too long: raised in its turn by the caller
            yield exc
            return
        if not chunk:
            return
        yield chunk


def _score_here(
    path: Path, chunk: list, questions: dict, config: Any, profile: str | None, digest: str | None
) -> tuple[list, BaseException | None]:
    """The chunk scored in this process, up to its first error, and that error."""
    from .lines import score_lines

    results: list = []
    try:
        results.extend(score_lines(path, chunk, questions, config, profile, digest))
    except Exception as exc:  # noqa: BLE001 - raised in its turn, after the lines before it
        return results, exc
    return results, None


def _send_setup(helpers: list[_Helper], setup: tuple) -> list[_Helper]:
    """``helpers`` once each has the setup; none (all closed) when a send fails: then every
    chunk is scored in this process, as when no helper could be started."""
    try:
        for h in helpers:
            h.send(setup)
    except OSError:
        for h in helpers:
            h.close()
        return []
    return helpers


def _serve() -> None:
    """The helper: score chunks until the parent closes the pipe; a chunk with any problem
    is answered with ``None`` (the parent then scores it itself)."""
    received = messages()
    path, questions, config, profile, digest = next(received)
    score_chunk = _struct_rows if profile is None or profile == "default" else _model_rows
    for chunk in received:
        try:
            with collector_paused():  # a chunk's traces, scores and rows are acyclic: no collector passes
                rows: list | None = score_chunk(chunk, path, questions, config, profile, digest)
        except Exception:  # noqa: BLE001 - the parent re-scores this chunk and raises the located error
            rows = None
        reply(rows)


def _model_rows(chunk: list, path: str, questions: dict, config: Any, profile: str | None, digest: str | None) -> list:
    """A chunk's rows from traces parsed by the model (any profile)."""
    from .lines import check_trace_line, rescore_trace

    rows = []
    for n, line in chunk:
        trace = check_trace_line(path, n, line, digest)
        s = rescore_trace(trace, questions, config, profile)
        t = trace.timings
        head = (*(getattr(trace, f) for f in HEAD_FIELDS), tuple(getattr(t, f) for f in TIMING_FIELDS))
        rows.append((head, *_score_values(s)))
    return rows


def _struct_rows(chunk: list, path: str, questions: dict, config: Any, profile: str | None, digest: str | None) -> list:
    """A chunk's rows from traces read as structs (the default profile, as
    :func:`~groundeval.scoring.io.iter_rescore_lines` reads them in one process); a line the
    struct does not vouch for is parsed by the model."""
    from ..trace.model import decode_trace
    from .lines import check_trace_line
    from .score import score

    rows = []
    for n, line in chunk:
        d = decode_trace(line)
        if d is None:
            d = check_trace_line(path, n, line, digest)
        elif digest is not None and d.contract_digest != digest:
            raise ValueError("another contract")
        t = d.timings
        head = (
            d.question_id,
            d.track,
            d.mode,
            d.agent,
            d.trial,
            d.contract_digest,
            d.usage,
            (t.started, t.ended, t.total_ms, t.call_latency_ms),
        )
        q = questions.get(d.question_id)
        rows.append((head, *_score_values(None if q is None else score(q, d, config))))
    return rows


_EVERY: list[Any] = []  # every field's name, and a getter of their values in field order


def _score_values(s: Any) -> tuple[tuple | None, frozenset | None]:
    """A score's values in field order, and its set fields when not all of them."""
    if s is None:
        return None, None
    if not _EVERY:
        fields = tuple(type(s).model_fields)
        _EVERY.extend((frozenset(fields), operator.itemgetter(*fields)))
    fs = s.__pydantic_fields_set__
    return _EVERY[1](s.__dict__), None if fs == _EVERY[0] else frozenset(fs)


if __name__ == "__main__":
    _serve()
