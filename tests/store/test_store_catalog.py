"""A store held in memory keeps its tables in an attached database (``catalog.py``), compressed
once they are large enough to gain: every cursor, on any thread, reads them; the same pack gives
the same rows and digest as a database file; compressed tables take less memory than DuckDB's own
in-memory ones, and small ones are left as loaded (compressed, they would take more)."""

from __future__ import annotations

import threading

from groundeval.store import catalog
from groundeval.store.store import Store
from groundeval.synth.generate import write_org

TABLES = ("events", "artifacts", "artifact_text", "event_actors", "event_artifacts")


def _rows(store: Store, table: str) -> list[tuple]:
    return store.query(f"SELECT * FROM {table} ORDER BY ALL")


def test_tables_live_compressed_in_the_store_database_and_read_as_from_a_file(repo_root, tmp_path, monkeypatch):
    pack = repo_root / "domain_packs" / "healthcare"
    monkeypatch.setattr(catalog, "COMPRESS_ABOVE", 0)  # a small pack, compressed all the same
    mem, disk = Store.open(pack), Store.open(pack, db=tmp_path / "h.duckdb")
    try:
        where = mem.query("SELECT DISTINCT database_name FROM duckdb_tables() WHERE NOT temporary")
        assert where == [(catalog.NAME,)]
        methods = {r[0] for r in mem.query("SELECT compression FROM pragma_storage_info('events')")}
        assert methods - {"Uncompressed"}, methods  # the checkpoint compressed something
        assert mem.digest == disk.digest
        for table in TABLES:
            assert _rows(mem, table) == _rows(disk, table)
        # a file holds its own tables: nothing attached
        assert disk.query("SELECT count(*) FROM duckdb_databases() WHERE database_name = ?", [catalog.NAME]) == [(0,)]
    finally:
        mem.close()
        disk.close()


def test_cursors_on_other_threads_read_the_store_while_its_connection_is_busy(repo_root):
    """A cursor is pointed at the store's database by querying only itself: the MCP server opens
    one per episode thread while another thread uses the connection."""
    store = Store.open(repo_root / "domain_packs" / "healthcare")
    expected = store.con.execute("SELECT count(*) FROM events").fetchone()[0]
    got: list[int] = []
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(20):
                got.append(store.cursor.execute("SELECT count(*) FROM events").fetchone()[0])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        for _ in range(50):
            assert store.con.execute("SELECT count(*) FROM artifacts").fetchone()[0] > 0
        for t in threads:
            t.join()
        assert not errors and got == [expected] * 80
    finally:
        store.close()


def _copied_bytes(store: Store) -> tuple[int, int]:
    """(the store's tables, the same rows copied into DuckDB's own in-memory database)."""
    con = store.con
    kept = _table_bytes(con)
    for table in TABLES:
        con.execute(f"CREATE TABLE memory.main.{table} AS SELECT * FROM {catalog.NAME}.main.{table}")
    return kept, _table_bytes(con) - kept


def test_large_tables_are_compressed_and_take_less_memory_than_duckdbs_own(tmp_path):
    write_org(tmp_path / "org", events=3000, seed=1, jobs=1)
    store = Store.open(tmp_path / "org")
    try:
        assert store.query("SELECT count(*) FROM events") == [(3000,)]
        compressed, plain = _copied_bytes(store)
        assert plain > catalog.COMPRESS_ABOVE and plain > 1.5 * compressed, (plain, compressed)
    finally:
        store.close()


def test_small_tables_are_left_as_loaded(repo_root):
    store = Store.open(repo_root / "domain_packs" / "healthcare")
    try:
        methods = {r[0] for r in store.query("SELECT compression FROM pragma_storage_info('events')")}
        assert methods == {"Uncompressed"}
        assert _table_bytes(store.con) <= catalog.COMPRESS_ABOVE
    finally:
        store.close()


def _table_bytes(con) -> int:
    return con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'").fetchone()[
        0
    ]
