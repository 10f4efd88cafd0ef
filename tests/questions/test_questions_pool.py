"""The shared candidate phases (questions/pool.py): seeded samples and covering as-of."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.questions.balance import seeded_hash
from groundeval.questions.pool import covering_as_of, seeded_sample

records = st.lists(
    st.tuples(st.sampled_from(["s1", "s2"]), st.booleans(), st.text("abc", min_size=1, max_size=4)),
    unique=True,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(rs=records, seed=st.integers(0, 5), keep=st.integers(1, 6), shuffle=st.randoms())
def test_seeded_sample_is_the_smallest_hashes_per_group_whatever_the_order(rs, seed, keep, shuffle):
    shuffled = list(rs)
    shuffle.shuffle(shuffled)
    got = seeded_sample(shuffled, lambda r: (r[0], r[1]), lambda r: r[2], seed, "track", keep)
    assert got == seeded_sample(rs, lambda r: (r[0], r[1]), lambda r: r[2], seed, "track", keep)
    expected = []
    for group in sorted({(r[0], r[1]) for r in rs}):
        members = [r for r in rs if (r[0], r[1]) == group]
        expected += sorted(members, key=lambda r: (seeded_hash(seed, "track", r[0], r[2]), r))[:keep]
    assert got == expected


def test_covering_as_of_waits_for_every_known_artifact():
    artifacts = {"A": ("docs", 50), "B": ("docs", 120), "C": ("docs", None)}
    assert covering_as_of(100, ["A", "B", "C", "missing"], artifacts) == 120
    assert covering_as_of(100, ["A", "C"], artifacts) == 100
    assert covering_as_of(7, random.Random(1).sample(["A", "B"], 2), artifacts) == 120
