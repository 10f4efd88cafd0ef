"""The loader's cheap pre-checks decide nothing the exact checks would not: a fragment
that matches the string-list or id-map regular expression passes the exact shape check,
and the blank-id pre-filter keeps every id that trims to nothing — on arbitrary JSON
(quotes, backslashes, escapes, unicode, nesting, spacing) as ``json_extract`` writes it."""

from __future__ import annotations

import json

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.store import ingest as I

STRINGS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(['"', "\\", '\\"', "\\u0041", " ", "  ", "\t", "\n", "é😀", "\u2028", "[", "]", "{", ":", ","]),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), STRINGS)
VALUES = st.recursive(
    SCALARS, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(STRINGS, kids, max_size=3), max_leaves=8
)
ID_MAPS = st.dictionaries(STRINGS, st.one_of(STRINGS, st.none(), st.lists(STRINGS, max_size=3), VALUES), max_size=4)

_CON = duckdb.connect()
ID_MAP_EXACT = (
    "(json_type(j) = 'OBJECT' AND coalesce(list_bool_and(list_transform(json_extract(j, '$.*'),"
    " v -> json_type(v) IN ('VARCHAR', 'NULL') OR " + I._is_string_list("v") + ")), true))"
)


def _fragment(value, ascii_only: bool, spaced: bool) -> str:
    """The value as the record's field, as the loader extracts it."""
    text = json.dumps({"f": value}, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else (",", ":"))
    return _CON.execute("SELECT json_extract(?, '$.f')", [text]).fetchone()[0]


def _check(fragment: str, rx: str, exact: str) -> None:
    matched, ok = _CON.execute(
        f"SELECT {I._matches('j', rx)}, {exact} FROM (SELECT ?::JSON AS j)", [fragment]
    ).fetchone()
    assert not matched or ok, fragment


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(STRINGS, max_size=4), VALUES), st.booleans(), st.booleans())
def test_a_string_list_match_passes_the_exact_check(value, ascii_only, spaced):
    _check(_fragment(value, ascii_only, spaced), I._RX_STRING_LIST, I._is_string_list("j"))


@settings(max_examples=300, deadline=None)
@given(st.one_of(ID_MAPS, VALUES), st.booleans(), st.booleans())
def test_an_id_map_match_passes_the_exact_check(value, ascii_only, spaced):
    _check(_fragment(value, ascii_only, spaced), I._RX_ID_MAP, ID_MAP_EXACT)


def test_the_expressions_match_what_they_should():
    for value in (["a", 'b"c', "d\\e", ""], []):
        fragment = _fragment(value, True, True)
        assert _CON.execute(
            f"SELECT {I._matches('j', I._RX_STRING_LIST)} FROM (SELECT ?::JSON AS j)", [fragment]
        ).fetchone()[0]
    for value in ({"a": "x", "b": None, "c": ["y", "z"], "d": []}, {}):
        fragment = _fragment(value, False, True)
        assert _CON.execute(
            f"SELECT {I._matches('j', I._RX_ID_MAP)} FROM (SELECT ?::JSON AS j)", [fragment]
        ).fetchone()[0]


@settings(max_examples=300, deadline=None)
@given(st.one_of(STRINGS, st.from_regex(r"\A *\Z"), st.from_regex(r"\A[ \t]*x?[ \t]*\Z")), st.booleans())
def test_the_blank_id_prefilter_keeps_every_blank_id(value, ascii_only):
    fragment = _fragment(value, ascii_only, False)
    pre, exact = _CON.execute(
        f"SELECT {I._blank_string('j')}, trim(j->>'$') = '' FROM (SELECT ?::JSON AS j)",
        [fragment],
    ).fetchone()
    assert pre == exact, fragment
