"""The parse step's ``valid`` (the extraction, under ``try``, did not fail) is ``json_valid``:
the same verdict and the same fragments on arbitrary text — JSON, near-JSON (NaN, trailing
commas and text, unclosed brackets, bad escapes, lone surrogates) and noise."""

from __future__ import annotations

import json

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.store import ingest as I

STRINGS = st.text(max_size=5) | st.sampled_from(['"', "\\", "\u2028", "😀", "\x00", "\ud800"])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | STRINGS,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(STRINGS, kids, max_size=3),
    max_leaves=8,
)
RECORDS = st.dictionaries(st.sampled_from(["id", "type", "timestamp", "actors", "x"]) | STRINGS, VALUES, max_size=5)
NOISE = st.text(alphabet=st.sampled_from(list('{}[]",:0123456789.eE+-tfnulNaI \\\t\nax\u2028')), max_size=25)
SPLICES = ["", ",", "}", "]", " junk", "\\", '"', "{", "NaN", "\\ud800", "\\x"]


@st.composite
def texts(draw) -> str:
    """A JSON text, possibly damaged by a splice at a random place, or noise."""
    if draw(st.booleans()):
        return draw(NOISE)
    text = json.dumps(draw(RECORDS), ensure_ascii=draw(st.booleans()), allow_nan=True)
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(st.sampled_from(SPLICES)) + text[at:]


def _reference(con: duckdb.DuckDBPyConnection, paths: list[str]) -> list[tuple]:
    """The parse as it was: ``json_valid``, then the extraction of the valid objects."""
    plist = "[" + ", ".join(f"'{p}'" for p in paths) + "]"
    return con.execute(f"""SELECT line, valid, ok, CASE WHEN ok THEN json_extract(text, {plist}) END FROM (
                              SELECT *, valid AND left(ltrim(text), 1) = '{{' AS ok FROM (
                                  SELECT *, json_valid(text) AS valid FROM st)) ORDER BY line""").fetchall()


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(texts(), min_size=1, max_size=8))
def test_parse_validity_and_fragments_equal_json_valid_then_extract(lines):
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE st (file VARCHAR, line INTEGER, text VARCHAR)")
    rows = [["f", i, t] for i, t in enumerate(lines) if "\ud800" not in t and "\x00" not in t]
    if not rows:
        return
    con.executemany("INSERT INTO st VALUES (?, ?, ?)", rows)
    paths = I.EVENT_PATHS
    expected = _reference(con, paths)
    I._parse(con, "st", "x", paths)
    cols = ", ".join(f"j{i + 1}" for i in range(len(paths)))
    got = con.execute(f"SELECT line, valid, ok, CASE WHEN ok THEN [{cols}] END FROM x ORDER BY line").fetchall()
    assert got == expected
