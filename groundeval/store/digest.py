"""The records part of the contract digest: canonical JSON per record, md5 per record,
sha256 over the sorted md5s — computed on every core.

Parsing and re-serialising each record in Python is most of a large load (about 5-10 µs
a record, single-threaded, while DuckDB's own work is parallel). Records are fetched in
chunks and hashed by helper processes (``python -m groundeval.store.digest``, started
from scratch: no ``fork`` of a process holding DuckDB threads, and no re-import of the
caller's ``__main__`` as ``multiprocessing``'s spawn does). Each helper returns its chunk's
md5s sorted, so the final sort only merges sorted runs. The definition does not change:
every path runs :func:`canonical_record`, and the digest is order-independent, so which
helper hashed which chunk cannot show. Small tables, one-core machines, a helper that
cannot start or fails, and ``GROUNDEVAL_DIGEST_WORKERS=0`` all hash in this process,
with the same result (a record the reference cannot canonicalise raises here as before).

This module imports nothing heavy: it is what each helper process runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

CHUNK = 32768  # records per fetch and per helper round trip
MIN_PARALLEL = 100_000  # below this many records, starting helpers costs more than it saves


def _number(text: str) -> float | int:
    """A JSON number in canonical form: an integral value within 2**53 is an integer
    (``1.0``, ``1e0`` and ``1`` are one number), any other keeps its float value."""
    value = float(text)
    if value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    return value


_CANON_DECODER = json.JSONDecoder(parse_float=_number)
# json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) without building
# an encoder per call (json.dumps does, for any non-default option: ~0.7 µs a record)
_CANON_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def canonical_record(text: str | bytes, drop: tuple[str, ...] = ()) -> bytes:
    """One record's canonical JSON (UTF-8): sorted keys at every level, no insignificant
    whitespace, normalised numbers; top-level keys in ``drop`` left out."""
    value = _CANON_DECODER.decode(text if isinstance(text, str) else text.decode("utf-8"))
    if drop and isinstance(value, dict):
        for key in drop:
            value.pop(key, None)
    return _CANON_ENCODE(value).encode("utf-8")


def chunk_md5s(rows: Sequence[Sequence[Any]], drop: tuple[str, ...] = ()) -> list[bytes]:
    """The sorted md5s of rows ``(*prefix, text)``: md5 of the prefix columns (each followed
    by ``\\x1f``) and the record's canonical JSON."""
    md5 = hashlib.md5
    out = []
    if rows and len(rows[0]) == 1:  # no prefix columns (events)
        out = [md5(canonical_record(text, drop)).digest() for (text,) in rows]
    else:
        for *prefix, text in rows:
            head = "".join(f"{p}\x1f" for p in prefix).encode("utf-8")
            out.append(md5(head + canonical_record(text, drop)).digest())
    out.sort()
    return out


def workers_wanted(records: int) -> int:
    """How many helper processes to hash ``records`` records with (0 = in this process)."""
    env = os.environ.get("GROUNDEVAL_DIGEST_WORKERS")
    if env is not None:
        try:
            return max(0, int(env))
        except ValueError:
            return 0
    if records < MIN_PARALLEL:
        return 0
    return idle_cores()


def idle_cores() -> int:
    """Helper processes worth starting now: the cores this process may use, up to 4, when
    at least one of them is idle (1-minute load average); 0 on one core or a busy machine,
    where helpers would only add their start-up and transfer costs (~30 % more CPU)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except (OSError, AttributeError):  # no load average (e.g. Windows)
        busy = 0.0
    return min(cores, 4) if cores > 1 and cores - busy >= 1 else 0


class _Helper:
    """One helper process: pickled ``(rows, drop)`` in, ``16 * len(rows)`` bytes of sorted md5s out."""

    def __init__(self) -> None:
        env = dict(os.environ, GROUNDEVAL_DIGEST_WORKERS="0")
        self.proc = subprocess.Popen([sys.executable, "-m", "groundeval.store.digest"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.pending = 0  # rows sent and not yet read back

    def send(self, rows: list, drop: tuple[str, ...]) -> None:
        assert self.proc.stdin is not None
        pickle.dump((rows, drop), self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.flush()
        self.pending = len(rows)

    def receive(self) -> list[bytes]:
        assert self.proc.stdout is not None
        size = 16 * self.pending
        data = self.proc.stdout.read(size)
        if data is None or len(data) != size:
            raise OSError("digest helper stopped")
        self.pending = 0
        return [data[i:i + 16] for i in range(0, size, 16)]

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _fetch(cur: Any) -> Iterator[list]:
    while rows := cur.fetchmany(CHUNK):
        yield rows


def records_digest(con: Any, sql: str, drop: tuple[str, ...] = (), *, workers: int | None = None) -> str:
    """sha256 over the sorted md5s of each record's canonical JSON (prefixed by the row's
    other columns): independent of record order, file layout and key order. ``con`` is a
    DuckDB connection; ``sql`` selects ``(*prefix, text)`` rows."""
    if workers is None:
        count = con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0]
        workers = workers_wanted(count)
    hashes: list[bytes] = []
    if workers > 0:
        try:
            hashes = _parallel(con.execute(sql), drop, workers)
        except OSError:
            hashes = []  # a helper could not start or died: hash everything here (same result)
            workers = 0
    if workers == 0:
        for rows in _fetch(con.execute(sql)):
            hashes += chunk_md5s(rows, drop)
    hashes.sort()  # sorted runs: the sort merges them
    return hashlib.sha256(b"".join(hashes)).hexdigest() if hashes else ""


def _parallel(cur: Any, drop: tuple[str, ...], workers: int) -> list[bytes]:
    """Chunks handed to ``workers`` helpers round-robin; each helper holds at most one chunk,
    and its answer is read before it is sent the next (no pipe can fill both ways)."""
    helpers: list[_Helper] = []
    hashes: list[bytes] = []
    try:
        helpers = [_Helper() for _ in range(workers)]
        turn = 0
        for rows in _fetch(cur):
            h = helpers[turn % workers]
            if h.pending:
                hashes += h.receive()
            h.send(rows, drop)
            turn += 1
        for h in helpers:
            if h.pending:
                hashes += h.receive()
    except (BrokenPipeError, EOFError, pickle.PickleError) as exc:
        raise OSError(str(exc)) from exc
    finally:
        for h in helpers:
            h.close()
    return hashes


def _serve() -> None:
    """The helper's loop: hash chunks until the parent closes the pipe."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            rows, drop = pickle.load(stdin)
        except EOFError:
            return
        stdout.write(b"".join(chunk_md5s(rows, drop)))
        stdout.flush()


if __name__ == "__main__":
    _serve()
