"""``GraphSQL.put``: rows go in as one JSON list of texts per column; the table must be
what DuckDB's CSV reader makes of the same rows (values as their ``str``, ``None`` as
empty text, cast to the column's type), whatever the texts hold."""

from __future__ import annotations

import csv
import os
import tempfile

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.graph.sql import GraphSQL

COLUMNS = [("s", "VARCHAR"), ("i", "BIGINT"), ("b", "BOOLEAN"), ("t", "VARCHAR"), ("m", "VARCHAR")]

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
_row = st.tuples(
    _text | st.none(),
    st.integers(-(2**62), 2**62),
    st.booleans(),
    st.sampled_from(["", " ", "a,b", '"q"', "x\ny", "\x1f", '["]', "\\u0000", "é"]),
    _text | st.integers(),  # texts and integers of any size in one column: its JSON as it is
)


def _table(gs: GraphSQL, name: str) -> list[tuple]:
    return gs.q(f"SELECT * FROM {name} ORDER BY ALL")


def _put_csv(gs: GraphSQL, table: str, columns: list[tuple[str, str]], rows: list[tuple]) -> None:
    """The reference: the rows through a CSV file and DuckDB's reader (every value quoted)."""
    decl = ", ".join(f"{n} {t}" for n, t in columns)
    gs.cur.execute(f"CREATE TEMP TABLE {table} ({decl})")
    if not rows:
        return
    spec = "{" + ", ".join(f"'{n}': '{t}'" for n, t in columns) + "}"
    with tempfile.TemporaryDirectory(prefix="groundeval-") as tmp:
        path = os.path.join(tmp, "rows.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            texts = [["" if v is None else str(v) for v in row] for row in rows]
            csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(texts)
        gs.cur.execute(
            f"INSERT INTO {table} SELECT * FROM read_csv(?, header = false, columns = {spec},"
            " delim = ',', quote = '\"', escape = '\"', auto_detect = false,"
            " allow_quoted_nulls = false, new_line = '\\n')",
            [path],
        )


@settings(max_examples=60, deadline=None)
@given(st.lists(_row, max_size=12))
def test_put_equals_csv_put(rows):
    gs = GraphSQL(duckdb.connect().cursor())
    gs.put("put", COLUMNS, rows)
    _put_csv(gs, "ref", COLUMNS, rows)
    assert _table(gs, "put") == _table(gs, "ref")
    assert gs.q("SELECT count(*) FROM put")[0][0] == len(rows)
    assert [r[1] for r in gs.q("DESCRIBE put")] == [t for _, t in COLUMNS]


def test_generator_rows_and_large_puts():
    gs = GraphSQL(duckdb.connect().cursor())
    rows = [(f"id-{i}", i) for i in range(20_005)]
    gs.put("many", [("id", "VARCHAR"), ("n", "INTEGER")], iter(rows))
    gs.put("few", [("id", "VARCHAR"), ("n", "INTEGER")], (r for r in rows[:3]))
    assert gs.q("SELECT * FROM many ORDER BY n") == rows
    assert gs.q("SELECT * FROM few ORDER BY n") == rows[:3]
