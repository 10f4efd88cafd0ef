"""unparseable_times sends its texts as one JSON parameter; the verdicts must be DuckDB's own."""

from __future__ import annotations

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.verifier.rules.shape import unparseable_times

TIMES = st.one_of(
    st.text(max_size=30),
    st.datetimes().map(lambda d: d.isoformat()),
    st.sampled_from(["2026-03-01T09:00:00Z", "2026-13-01", "2026-03-01 09:00", "", 'a"b\\c\n']),
)


class _Ctx:
    con = duckdb.connect()
    plain_cursor = con  # what unparseable_times queries through


@settings(max_examples=60, deadline=None)
@given(st.lists(TIMES, max_size=12))
def test_verdicts_match_a_plain_try_cast(values):
    values = [v for v in values if not any(0xD800 <= ord(c) <= 0xDFFF for c in v)]  # not storable text
    want = {
        v for v in values if _Ctx.con.execute("SELECT try_cast(?::VARCHAR AS TIMESTAMPTZ) IS NULL", [v]).fetchone()[0]
    }
    assert unparseable_times(_Ctx, values) == want
