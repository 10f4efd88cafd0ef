"""The records digest hashed by helper processes equals the digest computed in one process
by the original algorithm (kept below as the oracle), on awkward JSON: nesting, unicode
(astral, controls, U+2028), floats and their integral spellings, big integers, duplicate
and shuffled keys, whitespace — stored through DuckDB's JSON type as the store stores them."""

from __future__ import annotations

import hashlib
import json
import random
import threading

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.store import digest as D

KEYS = st.text(alphabet=st.characters(codec="utf-8"), max_size=6)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1e16, 2.0**53, 1e-7, 5e-324]),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=10),
    st.sampled_from(["\u2028", "\x00\x1f\x7f", "😀 ü", '\\"/', "id\x1fsub"]),
)
VALUES = st.recursive(
    SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(KEYS, kids, max_size=4), max_leaves=12
)
RECORDS = st.dictionaries(KEYS, VALUES, max_size=6)


def _spell(value, rng: random.Random) -> str:
    """JSON text of ``value`` with shuffled keys, random whitespace and integral floats spelled
    ``1.0``/``1e0``/``10E-1`` at random."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        sep = rng.choice([",", ", ", " ,\n"])
        return (
            "{"
            + sep.join(
                json.dumps(k, ensure_ascii=rng.random() < 0.5) + rng.choice([":", " : "]) + _spell(v, rng)
                for k, v in items
            )
            + "}"
        )
    if isinstance(value, list):
        return "[" + rng.choice([",", ", "]).join(_spell(v, rng) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 and rng.random() < 0.5:
        return rng.choice([f"{int(value)}.0", f"{int(value)}e0", f"{int(value) * 10}E-1"])
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


def _oracle(con, sql: str, drop: tuple[str, ...] = ()) -> str:
    """The digest as groundeval computed it before the helpers: one process, one sort."""
    hashes = []
    for *prefix, text in con.execute(sql).fetchall():
        head = "".join(f"{p}\x1f" for p in prefix).encode("utf-8")
        hashes.append(hashlib.md5(head + D.canonical_record(text, drop)).digest())
    hashes.sort()
    return hashlib.sha256(b"".join(hashes)).hexdigest() if hashes else ""


def _table(records: list[dict], seed: int) -> duckdb.DuckDBPyConnection:
    rng = random.Random(seed)
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id VARCHAR, subsystem VARCHAR, raw JSON)")
    rows = [[f"a{i}", rng.choice(["jira", "slack", "ü"]), _spell(r, rng)] for i, r in enumerate(records)]
    if rows:
        con.executemany("INSERT INTO t VALUES (?, ?, json(?))", rows)
    return con


SQLS = [("SELECT raw::VARCHAR FROM t", ()), ("SELECT id, subsystem, raw::VARCHAR FROM t", ("id", "subsystem"))]


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(RECORDS, max_size=25), st.integers(0, 2**16))
def test_in_process_digest_equals_oracle(records, seed):
    con = _table(records, seed)
    for sql, drop in SQLS:
        assert D.records_digest(con, sql, drop, workers=0) == _oracle(con, sql, drop)


@pytest.mark.slow
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)  # CHUNK only
@given(st.lists(RECORDS, min_size=1, max_size=40), st.integers(0, 2**16), st.integers(1, 3))
def test_helper_digest_equals_oracle(monkeypatch_chunk, records, seed, workers):
    """Several chunks per helper (chunk size 3), round-robin over 1-3 helper processes."""
    con = _table(records, seed)
    for sql, drop in SQLS:
        assert D.records_digest(con, sql, drop, workers=workers) == _oracle(con, sql, drop)


@pytest.fixture
def monkeypatch_chunk():
    old, D.CHUNK = D.CHUNK, 3
    yield
    D.CHUNK = old


def test_a_record_the_reference_refuses_fails_the_same_way(monkeypatch_chunk):
    """A helper that dies on a record is not trusted: the record is hashed here and raises
    as the one-process digest does (an integer past Python's digit limit for str())."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (raw VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?)", [['{"a": 1}'], ['{"b": 2}'], ['{"n": ' + "9" * 5000 + "}"]])
    with pytest.raises(ValueError):
        D.records_digest(con, "SELECT raw FROM t", workers=0)
    with pytest.raises(ValueError):
        D.records_digest(con, "SELECT raw FROM t", workers=2)


def test_store_digest_does_not_depend_on_helpers(tiny_pack, monkeypatch):
    from groundeval.store.store import Store

    monkeypatch.setenv("GROUNDEVAL_DIGEST_WORKERS", "0")
    alone = Store.open(tiny_pack).digest
    monkeypatch.setenv("GROUNDEVAL_DIGEST_WORKERS", "2")
    assert Store.open(tiny_pack).digest == alone


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(RECORDS, max_size=25), st.integers(0, 2**16))
def test_background_digest_equals_oracle(records, seed):
    """On a thread, through its own cursor, while this thread keeps using the connection."""
    con = _table(records, seed)
    with D.BackgroundDigests(con) as digests:
        futures = [digests.submit(sql, drop) for sql, drop in SQLS]
        con.execute("CREATE TABLE other AS SELECT * FROM range(1000)")
        assert [f.result() for f in futures] == [_oracle(con, sql, drop) for sql, drop in SQLS]


def test_background_digest_raises_the_records_error_and_stops(monkeypatch_chunk):
    con = duckdb.connect()
    con.execute("CREATE TABLE t (raw VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?)", [['{"a": 1}'], ['{"n": ' + "9" * 5000 + "}"]])
    with D.BackgroundDigests(con) as digests:
        failing = digests.submit("SELECT raw FROM t")
        with pytest.raises(ValueError):
            failing.result()
    con.execute("CREATE TABLE big AS SELECT '{\"a\": ' || range || '}' AS raw FROM range(100000)")
    stopped = threading.Event()
    stopped.set()  # a digest stopped before its first chunk reads no record
    assert D.records_digest(con, "SELECT raw FROM big", stopped=stopped, workers=0) == ""


def test_store_digest_is_the_one_computed_after_loading(tiny_pack):
    """Store.open hashes each table on a thread while it builds the others: the same value
    as hashing the loaded tables afterwards, in this thread (the verifier's way)."""
    from groundeval.contract.manifest import load_manifest
    from groundeval.store import store as S

    store = S.Store.open(tiny_pack)
    assert S._digest(store.con, load_manifest(tiny_pack).manifest, {}) == store.digest


@pytest.fixture
def tail_helper(monkeypatch, monkeypatch_chunk):
    """Chunks of 3, a helper joins with 3 records left, and a core always looks idle."""
    monkeypatch.setattr(D, "MIN_TAIL", 3)
    monkeypatch.setattr(D.IdleMeter, "core_idle", lambda self: True)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(RECORDS, min_size=1, max_size=40), st.integers(0, 2**16))
def test_tail_helper_digest_equals_oracle(tail_helper, records, seed):
    """This thread and one helper taking every other chunk once the tail is due."""
    con = _table(records, seed)
    due = threading.Event()
    due.set()
    for sql, drop in SQLS:
        assert D.records_digest(con, sql, drop, tail=due) == _oracle(con, sql, drop)


def test_tail_helper_that_dies_hands_its_chunk_back(tail_helper):
    """A record the helper cannot hash (it dies) is hashed here: the reference's error."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (raw VARCHAR)")
    rows = [['{"a": %d}' % i] for i in range(9)] + [['{"n": ' + "9" * 5000 + "}"]]
    con.executemany("INSERT INTO t VALUES (?)", rows)
    due = threading.Event()
    due.set()
    with pytest.raises(D.UnreadableRecord):
        D.records_digest(con, "SELECT raw FROM t ORDER BY raw DESC", tail=due)
    assert D.records_digest(con, "SELECT raw FROM t WHERE length(raw) < 100", tail=due) == _oracle(
        con, "SELECT raw FROM t WHERE length(raw) < 100"
    )


def test_store_open_with_a_tail_helper_gives_the_same_digest(tiny_pack, tail_helper, monkeypatch):
    from groundeval.store.store import Store

    monkeypatch.setenv("GROUNDEVAL_DIGEST_WORKERS", "0")
    alone = Store.open(tiny_pack).digest
    monkeypatch.delenv("GROUNDEVAL_DIGEST_WORKERS")
    assert Store.open(tiny_pack).digest == alone


def test_idle_meter_answers_after_a_pause():
    from groundeval.helper_process import IdleMeter

    meter = IdleMeter()
    assert meter.core_idle() is False  # too soon after the first look
    meter._last = (0, 0)  # as if the last look were at boot
    assert isinstance(meter.core_idle(), bool)
