"""Shape screening on a second core: which records pass the shape checks, found by a helper.

At a million records the shape checks are ~11 s of one core's Python (parsing, the schema
verdict, the facts later rules read). With a core idle, the second half of the records goes
to one helper process (``python -m groundeval.verifier.rules.screen_helper``, see
:mod:`groundeval.helper_process`) in chunks, while this process checks the first half. For
each record the helper answers its facts (:func:`verifier.context._facts_of`) when it passes
(:func:`verifier.rules.shape.passes`), else ``None``, and this process checks that record
itself: every finding is still worded and located by the one in-process path. Records come
out in their order, so "the first record with this id" is the same either way.
"""

from __future__ import annotations

import select
from collections.abc import Iterator, Sequence
from typing import Any

from groundeval.helper_process import HelperProcess, helpers_wanted

MODULE = "groundeval.verifier.rules.screen_helper"  # the helper's side
ENV = "GROUNDEVAL_SHAPE_WORKERS"  # 0: every record in this process; N > 0: the helper even on a busy machine
MIN_PARALLEL = 200_000  # below, the helper's start (~0.4 s of imports) and transfers cost more than they save
CHUNK = 16_384  # records per message (~4 MB of text)


def screened(records: Sequence[Any], kind: str) -> Iterator[tuple[Any, tuple[Any, str | None] | None]]:
    """``(record, record.parse_once())`` for each record in order, or ``(record, None)`` when a
    helper found that it passes: its facts are then known and its text released."""
    if helpers_wanted(ENV, len(records), MIN_PARALLEL) == 0:
        for rec in records:
            yield rec, rec.parse_once()
        return
    split = len(records) // 2
    theirs = [records[i : i + CHUNK] for i in range(split, len(records), CHUNK)]
    helper = _Helper(kind, theirs)
    try:
        for n, rec in enumerate(records[:split]):
            yield rec, rec.parse_once()
            if n % 1024 == 1023:
                helper.poll()
        for j, chunk in enumerate(theirs):
            facts = helper.result(j)
            if facts is None or len(facts) != len(chunk):  # the helper stopped: this process checks the chunk
                for rec in chunk:
                    yield rec, rec.parse_once()
                continue
            for rec, known in zip(chunk, facts):
                if known is None:
                    yield rec, rec.parse_once()
                else:
                    rec._facts, rec.text = known, None
                    yield rec, None
    finally:
        helper.close()


class _Helper:
    """One helper holding at most one chunk: its answer is read before it is sent the next (no
    pipe can fill both ways). Any failure to talk to it ends it; its chunks are then ``None``."""

    def __init__(self, kind: str, chunks: list[Sequence[Any]]) -> None:
        self.kind, self.chunks = kind, chunks
        self.results: dict[int, list] = {}
        self.sent = self.got = 0
        self.proc: HelperProcess | None = None
        try:
            self.proc = HelperProcess(MODULE, ENV)
            self._send_next()
        except OSError:
            self.close()

    def _send_next(self) -> None:
        if self.proc is not None and self.sent < len(self.chunks):
            self.proc.send((self.kind, [rec.text for rec in self.chunks[self.sent]]))
            self.sent += 1

    def _receive(self) -> None:
        assert self.proc is not None
        try:
            self.results[self.got] = self.proc.receive()
            self.got += 1
            self._send_next()
        except OSError:
            self.close()

    def poll(self) -> None:
        """Take its answer if it is ready (and send the next chunk); never waits."""
        if self.proc is not None and self.got < self.sent:
            stdout = self.proc.proc.stdout
            if stdout is not None and select.select([stdout], [], [], 0)[0]:
                self._receive()

    def result(self, j: int) -> list | None:
        """Chunk ``j``'s answer (waiting for it), or ``None`` once the helper has stopped."""
        while j not in self.results and self.proc is not None and self.got < self.sent:
            self._receive()
        return self.results.pop(j, None)

    def close(self) -> None:
        """End it (an answer it is still writing fails at once: see ``HelperProcess.close``)."""
        if self.proc is not None:
            proc, self.proc = self.proc, None
            proc.close()
