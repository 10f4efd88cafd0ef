"""The bootstrap draws multinomial counts over the distinct score rows: the same intervals
as resampling n indices (up to Monte-Carlo noise), seeded, and a cost that does not grow
with the number of rows when the rows take few distinct values."""

from __future__ import annotations

import random
import sys

import pytest

from groundeval.scoring.aggregate import CI_FIELDS, _bootstrap, _percentile, binomial


def _rows(n: int, rng: random.Random, distinct: int | None = None) -> list[dict[str, float]]:
    out = []
    for _ in range(n):
        v = rng.randrange(distinct) / distinct if distinct else rng.random()
        ok = float(rng.random() < 0.6)
        out.append({"s_answer": ok, "s_traj": v, "s_adj": ok * v, "accuracy": ok, "valid_answer_rate": float(v > 0.2)})
    return out


def _index_bootstrap(rows, samples, rng):
    """The textbook scheme: n indices drawn with replacement per resample."""
    n = len(rows)
    means = {f: [] for f in CI_FIELDS}
    for _ in range(samples):
        idx = [rng.randrange(n) for _ in range(n)]
        for f in CI_FIELDS:
            means[f].append(sum(rows[i][f] for i in idx) / n)
    return {f: [_percentile(sorted(v), 0.025), _percentile(sorted(v), 0.975)] for f, v in means.items()}


@pytest.mark.parametrize("n, p", [(1, 0.3), (9, 0.5), (50, 0.05), (400, 0.3), (10_000, 0.7), (200_000, 0.001)])
def test_binomial_mean_and_variance(n, p):
    rng = random.Random(n)
    draws = [binomial(rng, n, p) for _ in range(4000)]
    assert all(0 <= d <= n for d in draws)
    mean = sum(draws) / len(draws)
    var = sum((d - mean) ** 2 for d in draws) / (len(draws) - 1)
    sd = (n * p * (1 - p)) ** 0.5
    assert abs(mean - n * p) <= 5 * sd / len(draws) ** 0.5 + 1e-9
    assert var == pytest.approx(n * p * (1 - p), rel=0.15, abs=0.05)


def test_binomial_edges():
    rng = random.Random(0)
    assert binomial(rng, 10, 0.0) == 0 and binomial(rng, 10, 1.0) == 10 and binomial(rng, 0, 0.4) == 0


@pytest.mark.skipif(sys.version_info < (3, 12), reason="random.binomialvariate is new in Python 3.12")
def test_binomial_is_the_standard_library_s_draw_for_draw():
    for seed in range(50):
        for n, p in ((2, 0.4), (30, 0.2), (1000, 0.03), (1000, 0.7), (140_000, 0.2)):
            a, b = random.Random(seed), random.Random(seed)
            assert [binomial(a, n, p) for _ in range(10)] == [b.binomialvariate(n, p) for _ in range(10)]


@pytest.mark.parametrize("distinct", [7, None])
def test_intervals_match_index_resampling(distinct):
    rows = _rows(300, random.Random(1), distinct)
    ours = _bootstrap(rows, 1500, random.Random(2))
    ref = _index_bootstrap(rows, 1500, random.Random(3))
    for f in CI_FIELDS:
        width = ref[f][1] - ref[f][0]
        assert ours[f][0] == pytest.approx(ref[f][0], abs=0.08 * width + 1e-12), f
        assert ours[f][1] == pytest.approx(ref[f][1], abs=0.08 * width + 1e-12), f


def test_seeded_and_order_free():
    rows = _rows(300, random.Random(4), 5)
    a = _bootstrap(rows, 200, random.Random(9))
    assert a == _bootstrap(list(reversed(rows)), 200, random.Random(9))
    assert a != _bootstrap(rows, 200, random.Random(10))


class _Counting(random.Random):
    calls = 0

    def random(self):  # noqa: D102
        self.calls += 1
        return super().random()


def test_cost_does_not_grow_with_rows_of_few_values():
    small, large = _Counting(5), _Counting(5)
    _bootstrap(_rows(1_000, random.Random(6), 4), 100, small)
    _bootstrap(_rows(100_000, random.Random(6), 4), 100, large)
    assert large.calls < 3 * small.calls + 1000  # 100x the rows, about the same number of draws
