"""The policy tables are written with one INSERT per table (``_insert``); each table holds exactly
what one INSERT per row writes: same values, types and order, NULLs, booleans and open windows."""

from __future__ import annotations

from datetime import timezone

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.store.store import _insert

text = st.one_of(st.none(), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8))
times = st.one_of(
    st.sampled_from(["-infinity", "infinity"]),
    st.datetimes(timezones=st.just(timezone.utc)).map(lambda d: d.isoformat()),
)
rows = st.lists(st.tuples(text, st.one_of(st.none(), st.booleans()), times), max_size=12)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(rows)
def test_one_insert_equals_one_per_row(values):
    con = duckdb.connect()
    con.execute("SET TimeZone = 'Europe/Berlin'")
    for t in ("a", "b"):
        con.execute(f"CREATE TABLE {t} (n INTEGER, s VARCHAR, f BOOLEAN, ts TIMESTAMPTZ)")
    numbered = [[i, *r] for i, r in enumerate(values)]
    if numbered:
        con.executemany("INSERT INTO a VALUES (?, ?, ?, ?::TIMESTAMPTZ)", numbered)
    _insert(con, "b", ["?::INTEGER", "?", "?::BOOLEAN", "?::TIMESTAMPTZ"], numbered)
    a = con.execute("SELECT * FROM a").fetchall()
    b = con.execute("SELECT * FROM b").fetchall()
    assert b == a and len(b) == len(values)
