"""The digest's fast canonical form (msgspec, with the reference for what it does not vouch
for) equals the reference ``canonical_record`` byte for byte on arbitrary JSON texts — or
raises when the reference raises: nasty strings (controls, U+2028/U+2029, DEL, astral,
lone surrogates, escapes), numbers in every spelling (integral floats, exponents at the
edges of Python's plain notation, big integers, NaN/Infinity, overflow), duplicate keys,
whitespace, non-object tops, deep nesting, ``drop``, and text that is not JSON at all."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.store import digest as D

NASTY = st.sampled_from(
    [
        "\u2028\u2029",
        "\x00\x01\x1f\x7f",
        "\ud800",
        "\udfff x",
        "😀",
        "\ud83d\ude00",
        '\\"/\b\f\n\r\t',
        "id\x1fsub",
        "\ufeff",
        "é",
        "\uffff",
        "",
    ]
)
STRINGS = st.one_of(st.text(max_size=8), NASTY, st.text(alphabet=st.characters(), max_size=4))
FLOATS = st.one_of(
    st.floats(),  # NaN and infinities included
    st.sampled_from(
        [0.0, -0.0, 1e-4, 9.999e-5, 1e-5, 0.00010000000000000002, 1e16, 9999999999999998.0, 1e15 + 0.5]
        + [2.0**53, 2.0**53 + 2, -(2.0**53), 5e-324, 1.7976931348623157e308, 0.1, 1 / 3, 123.456]
    ),
    st.floats(min_value=1e-5, max_value=1e-3),
    st.floats(min_value=1e15, max_value=1e17),
)
NUMBER_TEXTS = st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?\Z")
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    FLOATS,
    STRINGS,
)
VALUES = st.recursive(
    SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(STRINGS, kids, max_size=4), max_leaves=15
)


def _spell(value, rng: random.Random) -> str:
    """JSON text (as Python writes it, NaN and Infinity included) with shuffled keys, random
    whitespace, an occasional duplicate key, and numbers in other spellings."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        if items and rng.random() < 0.2:
            items.append((items[0][0], rng.choice([None, 1, "dup"])))
        ws = rng.choice(["", " ", "\n\t", "\r\n "])
        return (
            "{"
            + ",".join(f"{ws}{json.dumps(k, ensure_ascii=rng.random() < 0.5)}{ws}:{_spell(v, rng)}" for k, v in items)
            + "}"
        )
    if isinstance(value, list):
        return "[" + rng.choice([",", ", "]).join(_spell(v, rng) for v in value) + "]"
    if isinstance(value, float) and value == value and abs(value) != float("inf") and rng.random() < 0.5:
        if value.is_integer() and abs(value) < 1e15:
            return rng.choice([f"{int(value)}.0", f"{int(value)}e0", f"{int(value) * 10}E-1", f"{int(value)}.000e+0"])
        return rng.choice([repr(value).upper(), f"{value:.17g}", f"{value:e}"])
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


def _reference(text, drop):
    try:
        return D.canonical_record(text, drop)
    except Exception as exc:  # noqa: BLE001 - the property compares the kind of failure too
        return type(exc)


def _fast(text, drop):
    """As the digest uses it: the fast form, else the reference (called from the same depth
    as :func:`_reference` calls it: where recursion gives up depends on the caller's stack)."""
    try:
        return D.canonical_fast(text, drop) or D.canonical_record(text, drop)
    except Exception as exc:  # noqa: BLE001
        return type(exc)


def _same(text, drop=()):
    assert _fast(text, drop) == _reference(text, drop)
    if isinstance(text, str):
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:
            return
        assert _fast(raw, drop) == _reference(raw, drop)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.integers(0, 2**16))
def test_fast_equals_reference_on_json_values(value, seed):
    _same(_spell(value, random.Random(seed)))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(STRINGS | st.sampled_from(["id", "subsystem"]), VALUES, max_size=6), st.integers(0, 2**16))
def test_fast_equals_reference_with_drop(record, seed):
    text = _spell(record, random.Random(seed))
    _same(text, ("id", "subsystem"))
    _same(f"[{text}]", ("id", "subsystem"))  # drop applies to a top-level object only


@settings(max_examples=300, deadline=None)
@given(NUMBER_TEXTS, st.sampled_from(["{0}", "[{0}]", '{{"n":{0}}}', " {0} "]))
def test_fast_equals_reference_on_number_spellings(number, shape):
    _same(shape.format(number))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]",:0123456789.eE+-tfnul \\ax\u2028\x00')), max_size=30))
def test_fast_equals_reference_on_arbitrary_text(text):
    _same(text)


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["[{}]", '{{"a":{}}}'])
def test_deep_nesting_is_decided_by_the_reference(shape):
    text = "1"
    for depth in range(1, 1100):  # where each parser gives up depends on the caller's stack depth
        text = shape.format(text)
        if depth >= 400:
            _same(text)


def test_known_cases():
    assert D.canonical_fast('{"a": 0.5}') == b'{"a":0.5}'
    assert D.canonical_fast('{"a": 1e-5}') is None  # Python writes 1e-05, msgspec 1e-5
    assert D.canonical_fast('{"a": NaN}') is None
    assert _fast('{"b": [1.0, {"d": 2, "c": 1e2}], "a": "ü"}', ()) == '{"a":"ü","b":[1,{"c":100,"d":2}]}'.encode()
    assert (
        D.canonical_fast('{"b": [1.0, {"d": 2, "c": 1e2}], "a": "ü"}') == '{"a":"ü","b":[1,{"c":100,"d":2}]}'.encode()
    )
    assert _fast('{"x": 1e-05, "y": 1E16, "z": 0.5, "w": NaN}', ()) == D.canonical_record(
        '{"x": 1e-05, "y": 1E16, "z": 0.5, "w": NaN}'
    )
    assert D.canonical_fast("[" + "9" * 30 + "]") == ("[" + "9" * 30 + "]").encode()
    assert _fast('{"n": ' + "9" * 5000 + "}", ()) is ValueError  # past Python's digit limit for int()
    assert _fast('"\\ud800"', ()) is UnicodeEncodeError
