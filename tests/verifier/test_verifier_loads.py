"""The verifier's record parser gives exactly what ``json.loads`` gives (values and types),
or raises as it does, whichever path parsed the text."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.store.digest import _DEEP as MAX_FAST_NESTING
from groundeval.verifier.context import loads


def same(a, b) -> bool:
    """Equal values of equal types all the way down (``1 == 1.0 == True`` does not count);
    iterative, for texts nested hundreds deep."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, float) and x != x:
            if y == y:
                return False
        elif x != y:
            return False
    return True


def outcome(parse, text):
    try:
        return "ok", parse(text)
    except (ValueError, RecursionError) as exc:
        return "error", str(exc)


def check(text: str) -> None:
    got, want = outcome(loads, text), outcome(json.loads, text)
    assert got[0] == want[0], text
    assert same(got[1], want[1]) if got[0] == "ok" else got[1] == want[1], text


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None), max_size=8)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(values, st.booleans(), st.sampled_from([None, (",", ":"), (", ", ": ")]))
def test_json_texts_parse_as_json_loads_parses_them(value, ascii_only, separators):
    check(json.dumps(value, ensure_ascii=ascii_only, separators=separators))


ODD = [
    '{"a": 1, "a": 2}',
    "1e400",
    "-1e400",
    "18446744073709551616",
    "-0",
    "-0.0",
    '"\\ud800"',
    '"\\udc00x"',
    "NaN",
    "Infinity",
    "[1, 2",
    "{} x",
    "  {}\n",
    '{"a": 1,}',
    "1.0",
    "1E5",
    '"\\u0000\\u2028"',
    "",
    "[" * (MAX_FAST_NESTING - 1) + "]" * (MAX_FAST_NESTING - 1),
    "[" * (MAX_FAST_NESTING + 1) + "]" * (MAX_FAST_NESTING + 1),
    "[" * 5000 + "]" * 5000,
]


def test_odd_texts_parse_or_fail_as_json_loads_does():
    for text in ODD:
        check(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,0123456789.eE-+ \\nultrfasNIy', max_size=30))
def test_arbitrary_texts_parse_or_fail_as_json_loads_does(text):
    check(text)
