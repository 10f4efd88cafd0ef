"""The per-line part of re-scoring: one traces-file line parsed, checked and scored, and the
:class:`TraceRef` a re-scored trace is kept as. Shared by :mod:`.io` (one process),
:mod:`.parallel` (helper processes) and the distributed backends."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..contract.models import ScoringConfig
from ..errors import ContractError
from ..questions.model import Question
from ..trace.model import Trace
from .model import QuestionScore
from .profiles import score


class TraceRef:
    """A re-scored trace as the reports keep it: the fields the aggregate and the run summary
    read, and the trace's line, parsed again only when the HTML drill-down shows that trace.
    A parsed trace takes ~7x its line in memory, so ``score`` holds lines, not traces; a
    reference made while reading the file itself (:meth:`of_struct`) holds where its line is
    (``(path, offset, size)``), read again, and checked to be the same trace, when needed."""

    __slots__ = (
        "question_id",
        "track",
        "mode",
        "agent",
        "trial",
        "contract_digest",
        "usage",
        "timings",
        "_line",
        "_full",
    )
    _KEPT = ("question_id", "track", "mode", "agent", "trial", "contract_digest", "usage", "timings")

    def __new__(cls, trace: Any = None, line: bytes | None = None):
        if type(trace) is cls and (trace._line is line or type(trace._line) is tuple):
            return trace  # already a reference to this line
        return object.__new__(cls)

    def __init__(self, trace: Trace, line: bytes):
        if trace is self:
            return
        for f in self._KEPT:
            setattr(self, f, getattr(trace, f))
        self._line = line
        self._full: Trace | None = None

    @classmethod
    def of_struct(cls, trace: Any, line: bytes | tuple[str, int, int]) -> TraceRef:
        """The reference to a trace read as a struct (:func:`~groundeval.trace.model.decode_trace`),
        its kept fields as the model holds them (``timings`` as the struct read, the same
        fields and values: building the model cost 1.8 us a trace); ``line``: its bytes, or
        where they are in the file (path, offset, size)."""
        ref = object.__new__(cls)
        ref.question_id = trace.question_id
        ref.track = trace.track
        ref.mode = trace.mode
        ref.agent = trace.agent
        ref.trial = trace.trial
        ref.contract_digest = trace.contract_digest
        ref.usage = trace.usage
        ref.timings = trace.timings
        ref._line = line
        ref._full = None
        return ref

    def __getattr__(self, name: str):  # reached only for the fields not kept above
        if name.startswith("__") or name in ("_line", "_full"):
            raise AttributeError(name)
        if self._full is None:
            self._full = Trace.model_validate_json(self._line) if type(self._line) is bytes else self._read()
        return getattr(self._full, name)

    def _read(self) -> Trace:
        """The trace at ``(path, offset, size)``, which must still be the trace scored."""
        from ..trace.io import read_trace_span, trace_key

        path, at, size = self._line
        try:
            trace = Trace.model_validate_json(read_trace_span(path, at, size))
        except (OSError, ValidationError):
            trace = None
        kept = (self.question_id, self.agent or "", self.mode, self.trial)
        if trace is None or trace_key(trace) != kept or trace.contract_digest != self.contract_digest:
            raise ContractError.single(
                path, f"changed while it was read: the trace of {self.question_id!r} at byte {at} is not there now"
            )
        return trace


def score_lines(
    path: Path,
    lines: Iterable[tuple[int, int, bytes]],
    questions: dict[str, Question],
    config: ScoringConfig | None,
    profile: str | None,
    contract_digest: str | None,
) -> Iterator[tuple[Trace | TraceRef, QuestionScore | None, bytes, int]]:
    """``(trace, score or None, line, line number)`` of each of ``lines``
    (:func:`~groundeval.trace.io.iter_trace_spans`), in order; a bad line or another
    contract's trace raises its located error. Under the default profile the traces are read
    as structs (:func:`~groundeval.trace.model.decode_trace`: the model's fields and values,
    four to five times faster) and yielded as :class:`TraceRef` holding where their line is,
    not the line (a 140K-trace file is ~250 MB of lines); a line the struct does not vouch
    for, or of another contract, is parsed by the model, which accepts it or raises the
    located error :func:`check_trace_line` raises. Under another profile: parsed models."""
    from ..trace.model import decode_trace
    from .score import score as score_default

    default = profile is None or profile == "default"
    get, of_struct = questions.get, TraceRef.of_struct
    where = str(path)
    for n, at, line in lines:
        trace = decode_trace(line) if default else None
        if trace is None or (contract_digest is not None and trace.contract_digest != contract_digest):
            trace = check_trace_line(path, n, line, contract_digest)  # the model: accepts, or raises located
            yield trace, rescore_trace(trace, questions, config, profile), line, n
            continue
        q = get(trace.question_id)
        s = None if q is None else score_default(q, trace, config)
        yield of_struct(trace, (where, at, len(line))), s, line, n


def check_trace_line(path: str | Path, n: int, line: bytes, contract_digest: str | None = None) -> Trace:
    """Line ``n`` of a traces file parsed, and checked against the questions' ``contract_digest``
    (located errors). The per-line part of re-scoring, shared by the distributed backends."""
    from ..trace.io import parse_trace

    trace = parse_trace(path, n, line)
    if contract_digest is not None and trace.contract_digest != contract_digest:
        raise ContractError.single(
            str(path),
            f"was recorded on another contract (digest {trace.contract_digest[:16]!r}, the "
            f"questions' is {contract_digest[:16]!r}); score it with the questions it answered",
            line=n,
            record=trace.question_id,
            field="contract_digest",
        )
    return trace


def rescore_trace(
    trace: Trace, questions: dict[str, Question], config: ScoringConfig | None = None, profile: str | None = None
) -> QuestionScore | None:
    """The score of one trace, or None for a trace of a question not in ``questions``."""
    q = questions.get(trace.question_id)
    return score(q, trace, config, profile) if q is not None else None
