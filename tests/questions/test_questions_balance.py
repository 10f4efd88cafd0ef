"""Selection's fast pick loop against the plain reading of its rule: at each step, keep
the eligible candidates (``_Tally.eligible``), choose the bucket, and take the
candidate with the lowest ``_Tally.priority``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.questions import balance
from groundeval.questions.balance import Candidate, _next_bucket, _pools, _Tally, quotas, seeded_hash, select

BUCKETS = {"positive": 0.5, "negative_a": 0.25, "negative_b": 0.25}


def _reference_picks(cands, total, ratios, difficulty, max_actor, max_type, seed):
    order = sorted(cands, key=lambda c: (seeded_hash(seed, c.key), c.key))
    pools = _pools(order, ratios)
    quota = quotas(total, ratios)
    tally = _Tally(max_actor, max_type, difficulty, {id(c): i for i, c in enumerate(order)})
    while len(tally.picked) < total:
        for b in pools:
            pools[b] = [c for c in pools[b] if tally.eligible(c)]
        open_ = [b for b in pools if pools[b]]
        if not open_:
            break
        bucket = _next_bucket(open_, pools, tally, quota, ratios)
        c = min(pools[bucket], key=tally.priority)
        pools[bucket].remove(c)
        tally.add(c)
    return tally.picked


candidates = st.lists(
    st.tuples(
        st.sampled_from(sorted(BUCKETS)),
        st.sampled_from([None, "ann", "bob", "cy"]),
        st.sampled_from(["deploy", "alert", "ticket"]),
        st.sampled_from(["", "g1", "g2"]),
        st.sampled_from(balance.DIFFICULTIES),
        st.sampled_from([None, "u1", "u2"]),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(
    rows=candidates,
    total=st.integers(0, 30),
    seed=st.integers(0, 3),
    max_actor=st.integers(1, 8),
    max_type=st.integers(1, 12),
    diff=st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
)
def test_select_picks_as_the_plain_rule(rows, total, seed, max_actor, max_type, diff):
    cands = [
        Candidate(
            key=f"k{i}",
            bucket=b,
            label=b == "positive",
            difficulty=d,
            event_type=t,
            actor=a,
            group=g,
            unique=u,
        )
        for i, (b, a, t, g, d, u) in enumerate(rows)
    ]
    difficulty = dict(zip(balance.DIFFICULTIES, diff))
    expected = _reference_picks(cands, total, BUCKETS, difficulty, max_actor, max_type, seed)
    limit = max(balance.SHORTCUT_LIMIT, 0.5)
    expected_trimmed, _ = balance._trim(expected, limit)
    got, _ = select(
        cands,
        total=total,
        bucket_ratios=BUCKETS,
        difficulty_ratios=difficulty,
        max_per_actor=max_actor,
        max_per_type=max_type,
        seed=seed,
    )
    assert [c.key for c in got] == [c.key for c in expected_trimmed]
