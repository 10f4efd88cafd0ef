"""A variance-aware regression test: is a run's drop from its baseline more than noise?

Both runs are reduced to one number per question — its S_adj, averaged over the
question's trials when the run repeated them — and compared **paired over the questions
both runs answered** (a hard question is hard in both runs; pairing removes that).

* The statistic is the mean per-question drop ``d = mean_i(base_i - new_i)``.
* The p-value is a **paired sign-flip randomization test** with a fixed seed: if the
  agent did not change, each question's two values are exchangeable, so every ``d_i``
  is as likely to carry either sign; ``p`` = the share of sign assignments whose mean is
  at least the observed one (one-sided; computed exactly when the assignments, grouped
  by equal |d|, are few, else from seeded random assignments as ``(1 + hits) / (1 + samples)``). It holds its level for any number of
  questions and any score distribution — the property test in
  ``tests/report/test_report_significance.py`` checks the false-failure rate of
  identically distributed runs stays at or under ``alpha``.
* The reported interval is the paired bootstrap (questions resampled with replacement,
  same fixed seed) 95% percentile interval of ``d``. It describes the drop; it does not
  decide (a percentile bootstrap *test* runs above its level with few questions and
  lumpy scores, which is why the decision is the sign-flip test's).

A drop check fails only when ``d > tolerance`` **and** ``p < alpha``; the questions with
the largest drops are named as its drivers. Draws use the report's seeded binomial
sampler over the distinct |d| values, so the cost grows with the number of distinct
values, not with samples x questions; the interval draws 1000 resamples.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..scoring.aggregate import binomial  # the seeded, version-independent Binomial sampler

DIGITS = 10
METHOD = "paired sign-flip randomization test over questions"
EXACT_COMBOS = 20000  # grouped sign assignments enumerated exactly up to this many


def _r(x: float) -> float:
    return round(x, DIGITS)


def per_question(scores: Iterable[Any], track: str | None = None) -> dict[str, float]:
    """Question id -> mean S_adj over its trials (scores of one run), optionally one track's."""
    sums: dict[str, list[float]] = {}
    for s in scores:
        if track is None or s.track == track:
            sums.setdefault(s.question_id, []).append(s.s_adj)
    return {q: sum(v) / len(v) for q, v in sums.items()}


@dataclass(frozen=True)
class PairedResult:
    """The paired comparison of one slice (overall or a track)."""

    n: int  # questions in both runs
    base_mean: float
    new_mean: float
    drop: float  # base_mean - new_mean (positive: the new run is worse)
    p_value: float  # one-sided: how likely a drop at least this large is without any change
    ci95: tuple[float, float]  # paired bootstrap percentile interval of the drop
    drivers: list[tuple[str, float, float]] = field(default_factory=list)  # (question, base, new), largest drop first
    samples: int = 0
    exact: bool = False
    method: str = METHOD

    def significant(self, alpha: float) -> bool:
        return self.p_value < alpha


def _groups(diffs: list[float]) -> list[tuple[float, int]]:
    """(|d|, count) of the non-zero differences, largest |d| first (a canonical order)."""
    counts: dict[float, int] = {}
    for d in diffs:
        a = abs(d)
        if a > 0:
            counts[a] = counts.get(a, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[0], kv[1]))


def sign_flip_p(diffs: list[float], *, samples: int = 10000, seed: int = 0) -> tuple[float, bool]:
    """One-sided p-value of ``mean(diffs) > 0`` under sign symmetry; ``(p, exact)``.

    Exact when the sign assignments, grouped by equal |d| (a group of c equal values
    has c + 1 distinct sums), number at most ``EXACT_COMBOS``; otherwise ``samples``
    seeded random assignments."""
    if not diffs:
        return 1.0, True
    observed = sum(diffs)
    eps = 1e-9 * max(1.0, sum(abs(d) for d in diffs))
    groups = _groups(diffs)
    if math.prod(c + 1 for _, c in groups) <= EXACT_COMBOS:
        # distribution of the signed sum, group by group: {sum: probability}
        dist = {0.0: 1.0}
        for m, c in groups:
            step = {}
            for j in range(c + 1):  # j of the c equal values keep a + sign
                w = math.comb(c, j) / 2**c
                v = m * (2 * j - c)
                for t, pr in dist.items():
                    key = t + v
                    step[key] = step.get(key, 0.0) + pr * w
            dist = step
        return min(1.0, sum(pr for t, pr in dist.items() if t >= observed - eps)), True
    rng = random.Random(seed)
    hits = 0
    for _ in range(samples):
        # the sum of c random signs is 2 * Binomial(c, 1/2) - c
        t = sum(m * (2 * binomial(rng, c, 0.5) - c) for m, c in groups)
        if t >= observed - eps:
            hits += 1
    return (1 + hits) / (1 + samples), False


def _bootstrap_ci(diffs: list[float], *, samples: int, seed: int) -> tuple[float, float]:
    """Paired bootstrap 95% percentile interval of mean(diffs) (questions resampled)."""
    n = len(diffs)
    if n == 0 or samples <= 0:
        return (0.0, 0.0)
    rng = random.Random(seed + 1)
    means = sorted(math.fsum(rng.choices(diffs, k=n)) / n for _ in range(samples))

    def pct(q: float) -> float:
        pos = q * (len(means) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(means) - 1)
        return means[lo] + (means[hi] - means[lo]) * (pos - lo)

    return (_r(pct(0.025)), _r(pct(0.975)))


def paired_test(
    base: Mapping[str, float], new: Mapping[str, float], *, samples: int = 10000, seed: int = 0, drivers: int = 5
) -> PairedResult:
    """Compare two runs' per-question values (``per_question``) on their common questions."""
    common = sorted(set(base) & set(new))
    diffs = [base[q] - new[q] for q in common]
    n = len(common)
    p, exact = sign_flip_p(diffs, samples=samples, seed=seed)
    worst = sorted((q for q in common if base[q] - new[q] > 0), key=lambda q: (-(base[q] - new[q]), q))
    return PairedResult(
        n=n,
        base_mean=_r(sum(base[q] for q in common) / n) if n else 0.0,
        new_mean=_r(sum(new[q] for q in common) / n) if n else 0.0,
        drop=_r(sum(diffs) / n) if n else 0.0,
        p_value=_r(p),
        ci95=_bootstrap_ci(diffs, samples=1000, seed=seed),
        drivers=[(q, _r(base[q]), _r(new[q])) for q in worst[:drivers]],
        samples=0 if exact else samples,
        exact=exact,
    )


def describe(name: str, r: PairedResult, *, tolerance: float, alpha: float) -> tuple[bool, str]:
    """``(passed, message)`` of one drop check: it fails only when the drop exceeds the
    tolerance and is significant at ``alpha``."""
    big = r.drop > tolerance + 1e-12
    sig = r.significant(alpha)
    passed = not (big and sig)
    lo, hi = r.ci95
    how = "exact" if r.exact else f"{r.samples} sign flips, seed fixed"
    msg = (
        f"{name}: mean S_adj {r.base_mean:.4f} → {r.new_mean:.4f} over {r.n} paired questions "
        f"(drop {r.drop:+.4f}, 95% CI [{lo:+.4f}, {hi:+.4f}]; p = {r.p_value:.4f}, {how}): "
    )
    if passed:
        if not big:
            msg += f"within allowed drop {tolerance:.4f}"
        else:
            msg += f"exceeds allowed drop {tolerance:.4f} but is not significant at alpha {alpha:g} (noise)"
    else:
        msg += f"exceeds allowed drop {tolerance:.4f} and is significant at alpha {alpha:g}"
    if not passed and r.drivers:
        msg += "; driven by " + ", ".join(f"{q} ({b:.3f} → {v:.3f})" for q, b, v in r.drivers)
    return passed, msg
