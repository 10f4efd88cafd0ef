"""The records part of the contract digest: canonical JSON per record, md5 per record,
sha256 over the sorted md5s.

The definition is :func:`canonical_record` (Python's ``json``: sorted keys, compact,
normalised numbers). :func:`canonical_fast` computes the same bytes with msgspec, about
three times faster (≈ 1.1 µs a record against 4-5 µs), and hands the reference every
record where msgspec could differ (floats it writes otherwise, text it refuses, deep
nesting): a hypothesis property holds the two equal byte for byte. Records are fetched in
chunks; past :data:`MIN_PARALLEL` records and with a core idle, the chunks are hashed by
helper processes (``python -m groundeval.store.digest``, started from scratch: no ``fork``
of a process holding DuckDB threads, and no re-import of the caller's ``__main__`` as
``multiprocessing``'s spawn does). Each helper returns its chunk's md5s sorted, so the final
sort only merges sorted runs. The digest is order-independent, so which helper hashed which
chunk cannot show. Small tables, one-core machines, a helper that cannot start or fails,
and ``GROUNDEVAL_DIGEST_WORKERS=0`` all hash in this process, with the same result (a record
the reference cannot canonicalise raises here as before).

This module imports nothing heavy: it is what each helper process runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import msgspec

from ..errors import GroundevalError
from ..gc_pause import collector_paused
from ..helper_process import HelperProcess, IdleMeter, helpers_wanted, messages, reply
from . import catalog

CHUNK = 32768  # records per fetch and per helper round trip
# Below this many records, helpers cost more than they save: with msgspec a record takes
# ≈ 3 µs here (fetch, canonical form, md5, sort) and a helper round trip adds ≈ 25 % CPU; at
# 100K records 2 helpers took 0.55 s CPU against 0.32 s in process, for no shorter wall time
# (measured at load 4-5; they start only when a core is idle anyway).
MIN_PARALLEL = 500_000
# Records still to hash for a helper to join at the end of a load: its start-up (≈ 0.1 s)
# against half of what is left (≈ 3 µs a record).
MIN_TAIL = 4 * CHUNK
ENV = "GROUNDEVAL_DIGEST_WORKERS"


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


def _fast_number(text: str) -> float | int:
    """:func:`_number` for the numbers msgspec writes exactly as Python's ``json`` does: an
    integral value within 2**53 (an integer), a float with 1e-4 <= |value| < 1e16 (both write
    the shortest round-trip digits, without exponent). Any other (1e-05, 1e+16, infinity)
    sends its record to the reference: msgspec would write ``1e-5``, ``1e16``, ``null``."""
    value = float(text)
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    if 1e-4 <= abs(value) < 1e16:
        return value
    raise ValueError("left to the reference")  # ends msgspec's decode: canonical_fast answers None


_FAST_DECODE = msgspec.json.Decoder(float_hook=_fast_number).decode
_FAST_ENCODE = msgspec.json.Encoder(order="sorted").encode
# Both parsers give up near the interpreter's recursion limit (counted from the caller's own
# stack depth), msgspec a few levels deeper: a record that could nest this deep is left to
# the reference, which decides.
_DEEP = 500

try:  # CPython's own md5: ~0.1 µs a call cheaper than OpenSSL's for records this small
    from _md5 import md5 as _md5  # pyright: ignore[reportMissingImports]
except ImportError:  # pragma: no cover - a Python built without it
    _md5 = hashlib.md5


def maybe_deep(text: str | bytes) -> bool:
    """Whether the text could nest deeper than ``_DEEP`` (it holds that many ``[`` and ``{``)."""
    if len(text) <= 2 * _DEEP:
        return False
    if isinstance(text, str):
        return text.count("[") + text.count("{") > _DEEP
    return text.count(b"[") + text.count(b"{") > _DEEP


def canonical_fast(text: str | bytes, drop: tuple[str, ...] = ()) -> bytes | None:
    """:func:`canonical_record`, byte for byte, three to four times faster — or ``None`` where
    it does not vouch for that, and the caller asks the reference (which gives its result or
    raises its error; called by the caller, it meets the recursion limit where it always did).

    msgspec parses and writes (sorted keys, the same escaping, integers of any size); it is
    not trusted with a number :func:`_fast_number` refuses, text it refuses (NaN, Infinity,
    a lone surrogate, an integer too long to parse, malformed JSON) or deep nesting."""
    if maybe_deep(text):
        return None
    try:
        value = _FAST_DECODE(text)
        if drop and type(value) is dict:
            for key in drop:
                value.pop(key, None)
        return _FAST_ENCODE(value)
    except Exception:  # noqa: BLE001 - whatever the fast path does not vouch for: the reference decides
        return None


class UnreadableRecord(GroundevalError, ValueError):
    """A record the reference cannot read though DuckDB did (an integer past Python's digit
    limit, nesting past the recursion limit); ``text`` is the record, the message the reader's."""

    def __init__(self, text: str | bytes, reason: BaseException) -> None:
        super().__init__(str(reason))
        self.text = text


def _reference(text: str | bytes, drop: tuple[str, ...]) -> bytes:
    try:
        return canonical_record(text, drop)
    except (ValueError, RecursionError) as exc:
        raise UnreadableRecord(text, exc) from None


def chunk_md5s(rows: Sequence[Sequence[Any]], drop: tuple[str, ...] = ()) -> list[bytes]:
    """The sorted md5s of rows ``(*prefix, text)``: md5 of the prefix columns (each followed
    by ``\\x1f``) and the record's canonical JSON (:func:`canonical_fast`, else the reference;
    :class:`UnreadableRecord` where that fails)."""
    md5, fast, ref = _md5, canonical_fast, _reference
    with collector_paused():  # parsed records hold no cycles: a collection every 700 of them only costs time
        if rows and len(rows[0]) == 1:  # no prefix columns (events)
            out = [md5(fast(text, drop) or ref(text, drop)).digest() for (text,) in rows]
        elif rows and len(rows[0]) == 3:  # two (artifacts: id, subsystem), without a join per row
            out = [
                md5(f"{a}\x1f{b}\x1f".encode() + (fast(text, drop) or ref(text, drop))).digest() for a, b, text in rows
            ]
        else:
            out = []
            for *prefix, text in rows:
                head = "".join(f"{p}\x1f" for p in prefix).encode("utf-8")
                out.append(md5(head + (fast(text, drop) or ref(text, drop))).digest())
    out.sort()
    return out


def workers_wanted(records: int) -> int:
    """How many helper processes to hash ``records`` records with (0 = in this process)."""
    return helpers_wanted(ENV, records, MIN_PARALLEL)


def _fetch(cur: Any, stopped: threading.Event | None = None) -> Iterator[list]:
    while (stopped is None or not stopped.is_set()) and (rows := cur.fetchmany(CHUNK)):
        yield rows


def records_digest(
    con: Any,
    sql: str,
    drop: tuple[str, ...] = (),
    *,
    workers: int | None = None,
    stopped: threading.Event | None = None,
    tail: threading.Event | None = None,
) -> str:
    """sha256 over the sorted md5s of each record's canonical JSON (prefixed by the row's
    other columns): independent of record order, file layout and key order. ``con`` is a
    DuckDB connection; ``sql`` selects ``(*prefix, text)`` rows. Once ``stopped`` is set
    the records are no longer read (the value returned then means nothing). ``tail``: hashed
    here, one helper joining once it is set (see :func:`_here`)."""
    count = 0
    if workers is None or tail is not None:
        count = con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0]
    if workers is None:
        workers = 0 if tail is not None else workers_wanted(count)
    hashes: list[bytes] = []
    if workers > 0:
        try:
            hashes = _parallel(con.execute(sql), drop, workers, stopped)
        except OSError:
            hashes = []  # a helper could not start or died: hash everything here (same result)
            workers = 0
    if workers == 0:
        hashes = _here(con.execute(sql), drop, stopped, tail, count)
    hashes.sort()  # sorted runs: the sort merges them
    return hashlib.sha256(b"".join(hashes)).hexdigest() if hashes else ""


def _here(
    cur: Any, drop: tuple[str, ...], stopped: threading.Event | None, tail: threading.Event | None, count: int
) -> list[bytes]:
    """Chunks hashed in this thread. Once ``tail`` is set (the caller's other work done) with
    at least :data:`MIN_TAIL` of the ``count`` records left and a core idle, one helper process
    hashes every other chunk while this thread hashes the next: the end of a load, when
    DuckDB no longer uses the second core, is hashed on both. A helper that fails hands its
    chunk back (hashed here: the same result, or the reference's error)."""
    hashes: list[bytes] = []
    helper: HelperProcess | None = None
    lent: list | None = None  # the chunk with the helper
    meter: IdleMeter | None = None
    done = 0

    def take_back() -> None:
        nonlocal helper, lent, tail
        assert helper is not None and lent is not None
        try:
            hashes.extend(_answer(helper))
        except OSError:
            hashes.extend(chunk_md5s(lent, drop))
            helper.close()
            helper, tail = None, None  # not asked again
        lent = None

    try:
        for rows in _fetch(cur, stopped):
            if helper is None and tail is not None and tail.is_set() and count - done >= MIN_TAIL:
                meter = meter or IdleMeter()
                if meter.core_idle():
                    try:
                        helper = _helper()
                    except OSError:
                        tail = None
            done += len(rows)
            if helper is not None and lent is None:
                try:
                    helper.send((rows, drop))
                    lent = rows
                    continue
                except OSError:
                    helper.close()
                    helper, tail = None, None
            hashes += chunk_md5s(rows, drop)
            if lent is not None:
                take_back()
        if lent is not None:
            take_back()
    finally:
        if helper is not None:
            helper.close()
    return hashes


def _helper() -> HelperProcess:
    """A helper process hashing chunks (:func:`_serve`)."""
    return HelperProcess("groundeval.store.digest", ENV)


def _answer(helper: HelperProcess) -> list[bytes]:
    """A helper's answer to one chunk: its md5s, sorted (sent as one string of 16-byte digests)."""
    data = helper.receive()
    return [data[k : k + 16] for k in range(0, len(data), 16)]


def _parallel(cur: Any, drop: tuple[str, ...], workers: int, stopped: threading.Event | None) -> list[bytes]:
    """Chunks handed to ``workers`` helpers round-robin; each helper holds at most one chunk,
    and its answer is read before it is sent the next (no pipe can fill both ways)."""
    helpers: list[HelperProcess] = []
    pending: list[bool] = []
    hashes: list[bytes] = []

    def collect(i: int) -> None:
        hashes.extend(_answer(helpers[i]))
        pending[i] = False

    try:
        helpers = [_helper() for _ in range(workers)]
        pending = [False] * workers
        for turn, rows in enumerate(_fetch(cur, stopped)):
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


class BackgroundDigests:
    """:func:`records_digest` of tables computed on one thread beside the caller's own DuckDB
    statements, which release the GIL while they run: at a million records the digest's
    Python (≈ 3 µs a record) overlaps the building of the next tables instead of following
    it. Tables are hashed one after another, in the order submitted, each through its own
    cursor (a DuckDB connection serves one thread at a time). The value is
    :func:`records_digest`'s; an error it raises is raised by ``Future.result()``.

    While the caller builds, DuckDB keeps both cores busy and tables are hashed on this thread
    alone; once the caller says :meth:`build_done`, one helper process may join for what is
    left (:func:`_here`). ``GROUNDEVAL_DIGEST_WORKERS`` set decides as for
    :func:`records_digest` instead.

    Use as a context manager: leaving it stops the thread (a table being hashed is dropped
    at its next chunk) and waits for it, so a failed load leaves no work running."""

    def __init__(self, con: Any) -> None:
        self._con = con
        self._stopped = threading.Event()
        self._built = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="groundeval-digest")

    def submit(self, sql: str, drop: tuple[str, ...] = ()) -> Future[str]:
        cur = catalog.cursor(self._con)
        tail = None if os.environ.get(ENV) is not None else self._built

        def run() -> str:
            try:
                return records_digest(cur, sql, drop, stopped=self._stopped, tail=tail)
            finally:
                cur.close()

        return self._pool.submit(run)

    def build_done(self) -> None:
        """The caller's DuckDB work is over: a helper may hash beside this thread."""
        self._built.set()

    def __enter__(self) -> BackgroundDigests:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._pool.shutdown(wait=True, cancel_futures=True)


def _serve() -> None:
    """The helper's loop: the sorted md5s of each chunk, as one byte string."""
    for rows, drop in messages():
        reply(b"".join(chunk_md5s(rows, drop)))


if __name__ == "__main__":
    _serve()
