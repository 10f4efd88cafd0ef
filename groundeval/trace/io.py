"""Traces on disk: one canonical JSON line per episode, appended durably.

Canonical = sorted keys, no insignificant whitespace, UTF-8; each append is flushed
and fsynced so a crash loses at most the episode in flight, never a half line
read back as a trace. Text UTF-8 cannot hold (a lone surrogate) is escaped as
:mod:`groundeval.trace.text` documents, so no agent string can make a write fail.

A traces file holds a run: **one trace per (question, trial)**, whatever its agent or mode
say; a second one is a located error (:class:`TraceKeys`), the same rule for ``score`` and
``run --resume``.
``trial`` is 0 unless the run repeated its questions (``run --trials K``), so a file
written before trials existed reads exactly as before.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from ..errors import ContractError
from .model import Trace
from .text import escape_all

_APPEND_LOCK = threading.Lock()
MAX_LINE_BYTES = 64 * 1024 * 1024  # a trace line longer than this is refused when read


def trace_line(trace: Trace) -> str:
    """The canonical JSON text of one trace (no trailing newline), always valid UTF-8."""
    data = trace.model_dump(mode="json")
    line = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a surrogate that reached the trace unescaped: escape, never fail
            line = json.dumps(escape_all(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return line


def append_trace(path: str | Path, trace: Trace) -> None:
    """Append one trace line to ``path`` (created with its folder if missing), flush and fsync.

    Raises ``OSError`` when the line cannot be written: callers must report it, never drop it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (trace_line(trace) + "\n").encode("utf-8")
    with _APPEND_LOCK, open(path, "ab") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def check_writable(path: str | Path) -> None:
    """Fail now, with a located error, when traces could not be appended to ``path``.

    Opens it for appending (creating the file and its folder when missing) without
    writing anything."""
    path = Path(path)
    try:
        if path.exists() and path.is_dir():
            raise IsADirectoryError(21, "is a directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab"):
            pass
    except OSError as exc:
        raise ContractError.single(str(path), f"traces cannot be written here: {exc.strerror or exc}") from None


def trace_key(trace: Trace) -> tuple[str, str, str, int]:
    return (trace.question_id, trace.agent or "", trace.mode, trace.trial)


class TraceKeys:
    """One trace per (question, trial) in a file — a run's file, whatever the other fields of a
    line say (its agent, null or any name, zero-width characters included, or its mode): a
    repeat is a located error, so no question counts twice in a mean."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.first: dict[tuple[str, int], int] = {}

    def add(self, trace: Trace, line: int) -> None:
        trial = trace.trial  # once per re-scored trace: the key made here, no further call
        seen = self.first.setdefault((trace.question_id, trial), line)
        if seen != line:
            trial_text = f", trial {trial}" if trial else ""
            raise ContractError.single(
                self.path,
                f"a second trace of question {trace.question_id!r}{trial_text} (the first is at line {seen}): "
                "one trace per question and trial in a run, whatever its agent or mode — remove one of the two "
                "lines (several agents' runs go in files of their own)",
                line=line,
                record=trace.question_id,
            )


def iter_trace_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` of every non-blank line; a missing file or an over-long line is located."""
    for n, _at, line in iter_trace_spans(path):
        yield n, line


def iter_trace_spans(path: str | Path) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, byte offset, bytes)`` of every non-blank line (:func:`iter_trace_lines`
    with where each line starts, for :func:`read_trace_span`)."""
    path = Path(path)
    if not path.is_file():
        raise ContractError.single(str(path), "no such traces file")
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise ContractError.single(str(path), f"cannot read: {exc.strerror or exc}") from None
    at = 0
    with fh:
        # each line read with a size limit: an over-long one is refused before it is held whole
        for n, line in enumerate(iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(line) > MAX_LINE_BYTES:
                raise ContractError.single(str(path), f"line longer than {MAX_LINE_BYTES} bytes", line=n)
            if not line.isspace():  # blank = ASCII whitespace only, as ``strip`` says, without copying the line
                yield n, at, line
            at += len(line)


def read_trace_span(path: str | Path, at: int, size: int) -> bytes:
    """The ``size`` bytes of ``path`` from offset ``at`` (a line :func:`iter_trace_spans` yielded)."""
    with open(path, "rb") as fh:
        fh.seek(at)
        return fh.read(size)


def parse_trace(path: str | Path, n: int, line: bytes | str) -> Trace:
    """One trace line; invalid JSON, invalid UTF-8 or a bad field is a located ContractError."""
    try:
        return Trace.model_validate_json(line)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        raise ContractError.single(str(path), err.get("msg", "invalid trace"), line=n, field=field) from None


def read_traces(path: str | Path, *, unique: bool = True) -> list[Trace]:
    """Every trace in a JSONL file, in file order; a bad line is a located ContractError,
    and so is a second trace of the same (question, trial) unless ``unique=False``."""
    keys = TraceKeys(path)
    out = []
    for n, line in iter_trace_lines(path):
        trace = parse_trace(path, n, line)
        if unique:
            keys.add(trace, n)
        out.append(trace)
    return out
