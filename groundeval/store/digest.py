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
from collections.abc import Iterator, Sequence
from typing import Any

from ..helper_process import HelperProcess, helpers_wanted, messages, reply

CHUNK = 32768  # records per fetch and per helper round trip
MIN_PARALLEL = 100_000  # below this many records, starting helpers costs more than it saves


def _number(text: str) -> float | int:
    """A JSON number in canonical form: an integral value within 2**53 is an integer
    (``1.0``, ``1e0`` and ``1`` are one number), any other keeps its float value."""
    value = float(text)
    if value.is_integer() and abs(value) < 2**53:
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
    return helpers_wanted("GROUNDEVAL_DIGEST_WORKERS", records, MIN_PARALLEL)


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
    helpers: list[HelperProcess] = []
    pending: list[bool] = []
    hashes: list[bytes] = []

    def collect(i: int) -> None:
        data = helpers[i].receive()
        hashes.extend(data[k : k + 16] for k in range(0, len(data), 16))
        pending[i] = False

    try:
        helpers = [HelperProcess("groundeval.store.digest", "GROUNDEVAL_DIGEST_WORKERS") for _ in range(workers)]
        pending = [False] * workers
        for turn, rows in enumerate(_fetch(cur)):
            i = turn % workers
            if pending[i]:
                collect(i)
            helpers[i].send((rows, drop))
            pending[i] = True
        for i in range(workers):
            if pending[i]:
                collect(i)
    finally:
        for h in helpers:
            h.close()
    return hashes


def _serve() -> None:
    """The helper's loop: the sorted md5s of each chunk, as one byte string."""
    for rows, drop in messages():
        reply(b"".join(chunk_md5s(rows, drop)))


if __name__ == "__main__":
    _serve()
