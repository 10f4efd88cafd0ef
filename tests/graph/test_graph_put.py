"""``GraphSQL.put``: a few rows go in as one separated text per column, many through a
CSV file; both must give the very same table (values as their ``str``, ``None`` as
empty text, cast to the column's type)."""

from __future__ import annotations

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.graph.sql import GraphSQL

COLUMNS = [("s", "VARCHAR"), ("i", "BIGINT"), ("b", "BOOLEAN"), ("t", "VARCHAR")]

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
_row = st.tuples(
    _text | st.none(), st.integers(-(2**62), 2**62), st.booleans(), st.sampled_from(["", " ", "a,b", '"q"', "x\ny"])
)


def _table(gs: GraphSQL, name: str) -> list[tuple]:
    return gs.q(f"SELECT * FROM {name} ORDER BY ALL")


@settings(max_examples=60, deadline=None)
@given(st.lists(_row, max_size=12))
def test_small_put_equals_csv_put(rows):
    gs = GraphSQL(duckdb.connect().cursor())
    gs.put("small", COLUMNS, rows)
    decl = ", ".join(f"{n} {t}" for n, t in COLUMNS)
    if rows:
        gs._put_csv("big", COLUMNS, rows, decl)
    else:
        gs.cur.execute(f"CREATE TEMP TABLE big ({decl})")
    assert _table(gs, "small") == _table(gs, "big")
    assert gs.q("SELECT count(*) FROM small")[0][0] == len(rows)
    assert [r[1] for r in gs.q("DESCRIBE small")] == [t for _, t in COLUMNS]


def test_generator_rows_and_large_puts():
    gs = GraphSQL(duckdb.connect().cursor())
    rows = [(f"id-{i}", i) for i in range(GraphSQL.SPLIT_ROWS + 5)]
    gs.put("many", [("id", "VARCHAR"), ("n", "INTEGER")], iter(rows))
    gs.put("few", [("id", "VARCHAR"), ("n", "INTEGER")], (r for r in rows[:3]))
    assert gs.q("SELECT * FROM many ORDER BY n") == rows
    assert gs.q("SELECT * FROM few ORDER BY n") == rows[:3]
