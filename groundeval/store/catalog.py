"""Where a store held in memory keeps its tables: an attached in-memory database with DuckDB's
compression (``ATTACH ':memory:' (COMPRESS)``), made the default of every connection that reads it.

DuckDB's own in-memory database never compresses: a 22.5K-event pack's tables took 31 MB there
and 9 MB compressed (texts by FSST and dictionaries, ids and times bit-packed), for a checkpoint of
~80 ms. Compression happens at a checkpoint, so the loader checkpoints once its tables are built,
when they are large enough to gain; what is written later (the search index; the working tables
are temporary anyway) stays as written. A connection's default database is its own setting:
every cursor opened on the store is pointed at it through :func:`cursor`. A database file
(``--db``) is compressed by DuckDB as it is written and needs none of this."""

from __future__ import annotations

from typing import Any

NAME = "store"


def attach(con: Any) -> None:
    """Give ``con`` a compressed in-memory database for the store's tables, as its default."""
    con.execute(f"ATTACH ':memory:' AS {NAME} (COMPRESS)")
    con.execute(f"USE {NAME}")


# Compressed segments take whole blocks: below a few MB of tables compression costs memory
# (a 90-event pack: 1.9 MB as loaded, 3.1 MB compressed; 2K events: 6.1 -> 3.1 MB; 22.5K: 31 -> 9).
COMPRESS_ABOVE = 4 * 2**20


def compress(con: Any) -> bool:
    """Compress what the store's database holds now (a checkpoint), if ``con`` uses one and its
    tables take more than :data:`COMPRESS_ABOVE` bytes as loaded. Returns whether it did."""
    if _current(con) != NAME:
        return False
    used = con.execute(
        "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'"
    ).fetchone()[0]
    if used <= COMPRESS_ABOVE:
        return False
    con.execute(f"CHECKPOINT {NAME}")
    return True


def cursor(con: Any) -> Any:
    """A new cursor on ``con``'s database, on the store's database when it has one (a cursor
    starts on DuckDB's own). Only the new cursor is queried: ``con`` may be in use on another
    thread."""
    cur = con.cursor()
    if cur.execute("SELECT count(*) FROM duckdb_databases() WHERE database_name = ?", [NAME]).fetchone()[0]:
        cur.execute(f"USE {NAME}")
    return cur


def _current(con: Any) -> str:
    return con.execute("SELECT current_database()").fetchone()[0]
