"""The scorer's small helpers written for speed equal their plain definitions: ``_clean``
(memoised rounding) and ``answers.id_list`` (a loop instead of a generator), on any input."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.scoring import answers as A
from groundeval.scoring.score import DIGITS, _clean

NUMBERS = st.one_of(
    st.floats(),
    st.floats(0, 1),
    st.sampled_from([0.0, -0.0, 1.0, 0.1 + 0.2, 1 / 3, 0.48999999999999994, 0.49]),
    st.integers(-3, 3),
    st.booleans(),
)


def _clean_reference(x):
    return x if x == 0.0 or x == 1.0 else round(x, DIGITS)


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


@settings(max_examples=500, deadline=None)
@given(st.lists(NUMBERS, max_size=8))
def test_clean_is_round_to_its_digits_whatever_was_rounded_before(xs):
    for x in xs + xs:  # the second time from the memo
        assert _same(_clean(x), _clean_reference(x)), x


def _id_list_reference(answer, name):
    value = A.field(answer, name)
    if not isinstance(value, list):
        return []
    return list(dict.fromkeys(str(v).strip() for v in value if isinstance(v, (str, int))))


class Label(str):
    def __str__(self) -> str:
        return "label:" + super().__str__()


IDS = st.one_of(
    st.text(max_size=4),
    st.sampled_from([" a", "a ", "a", "\u00a0a"]),
    st.integers(-2, 2),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.text(max_size=3).map(Label),
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.lists(IDS, max_size=6), IDS, st.dictionaries(st.text(max_size=2), IDS, max_size=2)))
def test_id_list_is_its_plain_definition(value):
    for answer in ({"evidence_artifacts": value}, {"evidence": value}, {}, None):
        got, want = A.id_list(answer, "evidence_artifacts"), _id_list_reference(answer, "evidence_artifacts")
        assert got == want and all(type(x) is str for x in got)
