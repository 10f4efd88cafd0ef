"""DuckDB's allocator keeps what finished queries freed; the store hands it back between phases."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

from groundeval.store.store import Store, release_freed_memory

SETTING = "allocator_bulk_deallocation_flush_threshold"
TINY = Path(__file__).resolve().parents[2] / "domain_packs" / "tiny"


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 2**20


def _setting(con) -> str:
    return con.execute(f"SELECT current_setting('{SETTING}')").fetchone()[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_release_hands_back_what_a_finished_query_kept():
    con = duckdb.connect()
    default = _setting(con)
    before = _rss_mb()
    con.execute("CREATE TEMP TABLE x AS SELECT range::VARCHAR AS s, count(*) AS n FROM range(500000) GROUP BY ALL")
    con.execute("DROP TABLE x")
    kept = _rss_mb() - before
    assert kept > 20, "the query's memory should still be held (else this test shows nothing)"
    release_freed_memory(con)
    assert _rss_mb() - before < kept / 2
    assert _setting(con) == default


def test_a_loaded_store_leaves_the_setting_at_its_default():
    default = _setting(duckdb.connect())
    store = Store.open(TINY)
    try:
        assert _setting(store.con) == default
        assert _setting(store.cursor) == default
    finally:
        store.close()
