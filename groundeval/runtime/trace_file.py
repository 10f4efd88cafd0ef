"""The traces file of ``groundeval serve``: appended by one or many server processes at once.

Several servers may record into one file (two hosts started with the same pack write to the
same default file). Each trace gets its ``trial`` when it is written, not when its episode
starts: under an exclusive lock on the file (``fcntl.flock`` where the platform has it) the
writer reads what other processes appended since its last write, numbers the trace one past
the highest trial of its question in the file, and appends it. So a file never holds two
traces of one (question, trial), whatever the number of servers, restarts or concurrent
episodes of one question, and ``groundeval score`` always accepts it.

Lines that are not traces are skipped here (scoring reports them, located); a last line
without its newline (a writer killed mid-line) is ended before the next trace is appended.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from ..trace.io import check_writable, trace_line
from ..trace.model import Trace

try:  # POSIX: one writer at a time across processes
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process's threads are still serialised
    fcntl = None  # type: ignore[assignment]


class TraceFile:
    """Appends traces to ``path``, numbering trials per question across every writer."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        check_writable(self.path)  # a located error now rather than a lost episode later
        self._lock = threading.Lock()
        self._next: dict[str, int] = {}  # question id -> the trial the next trace of it gets
        self._offset = 0  # bytes of the file already read into _next (always at a line's end)
        with open(self.path, "rb") as fh:
            self._catch_up(fh)

    def _catch_up(self, fh) -> None:
        """Read the lines appended since the last read (all of them if the file shrank)."""
        size = os.fstat(fh.fileno()).st_size
        if size < self._offset:  # replaced or truncated: the file is the truth, start over
            self._next, self._offset = {}, 0
        fh.seek(self._offset)
        data = fh.read(size - self._offset)
        end = data.rfind(b"\n") + 1  # a last line without its newline is not complete yet
        for line in data[:end].splitlines():
            try:
                t = json.loads(line)
                qid, trial = t["question_id"], int(t.get("trial", 0))
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(qid, str) and trial >= self._next.get(qid, 0):
                self._next[qid] = trial + 1
        self._offset += end

    def next_trial(self, question_id: str) -> int:
        """The trial the next trace of ``question_id`` would get (as far as this writer knows)."""
        with self._lock:
            return self._next.get(question_id, 0)

    def append(self, trace: Trace) -> Trace:
        """Number ``trace`` (its ``trial`` is set) and append it, flushed and fsynced.
        Raises ``OSError`` when it cannot be written: the caller reports it, never drops it."""
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a+b") as fh:
                if fcntl is not None:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # released when the file is closed
                self._catch_up(fh)
                trace.trial = self._next.get(trace.question_id, 0)
                data = (trace_line(trace) + "\n").encode("utf-8")
                size = os.fstat(fh.fileno()).st_size
                if size > self._offset:  # a torn last line: end it so this trace starts a line of its own
                    data = b"\n" + data
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
                self._next[trace.question_id] = trace.trial + 1
                self._offset = size + len(data)
        return trace
