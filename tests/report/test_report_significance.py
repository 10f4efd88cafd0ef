"""Issue 19: the variance-aware gate — a paired test over questions that fails only when a
drop is larger than the tolerance and significant.

The property: for an agent whose trials are identically distributed, the gate's
false-failure rate over many simulated baselines stays at or under alpha (a margin of
three binomial standard deviations covers the simulation's own noise); a degraded agent
is caught. Seeded simulation, so the test itself is deterministic."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace

import pytest

from groundeval.report.gate import paired_drop_checks
from groundeval.report.significance import describe, paired_test, per_question, sign_flip_p

TRACKS = ("perspective", "counterfactual", "silence")
VALUES = (0.0, 0.21, 0.51, 0.75)  # S_adj of an invalid trial (a few typical partial scores)


def _pool(rng: random.Random, n: int) -> list[tuple[str, str, float]]:
    """(question id, track, probability that a trial is valid) — the agent's fixed ability."""
    return [(f"q{i:03d}", TRACKS[i % len(TRACKS)], rng.random()) for i in range(n)]


def _run(rng: random.Random, pool, trials: int = 1, degrade: float = 0.0) -> list[SimpleNamespace]:
    out = []
    for qid, track, p in pool:
        for k in range(trials):
            valid = rng.random() < max(0.0, p - degrade)
            s_adj = 1.0 if valid else rng.choice(VALUES)
            out.append(SimpleNamespace(question_id=qid, track=track, trial=k, s_adj=s_adj))
    return out


def _gate_fails(base, new, *, max_drop: float, alpha: float) -> bool:
    return any(not c.passed for c in paired_drop_checks(base, new, max_drop=max_drop, alpha=alpha, samples=1000))


@pytest.mark.slow
@pytest.mark.parametrize("trials", [1, 3])
def test_false_failure_rate_of_an_unchanged_agent_is_at_most_alpha(trials):
    rng = random.Random(1900 + trials)
    sims, alpha = 200, 0.05
    fails = 0
    for _ in range(sims):
        pool = _pool(rng, 30)
        fails += _gate_fails(_run(rng, pool, trials), _run(rng, pool, trials), max_drop=0.0, alpha=alpha)
    margin = 3 * math.sqrt(alpha * (1 - alpha) / sims)
    assert fails / sims <= alpha + margin, f"false-failure rate {fails / sims:.3f}"


@pytest.mark.slow
@pytest.mark.parametrize("trials", [1, 3])
def test_a_degraded_agent_is_caught(trials):
    """Valid trials 0.4 less likely on every question (a mean S_adj drop near 0.2) over
    60 questions; repeated trials average out noise, so they catch it more often."""
    rng = random.Random(7)
    sims = 60
    caught = 0
    for _ in range(sims):
        pool = _pool(rng, 60)
        caught += _gate_fails(_run(rng, pool, trials), _run(rng, pool, trials, degrade=0.4), max_drop=0.02, alpha=0.05)
    assert caught / sims >= (0.8 if trials == 1 else 0.95), f"caught {caught} of {sims}"


def test_a_real_drop_within_the_tolerance_passes():
    rng = random.Random(11)
    pool = [(f"q{i}", "silence", 0.9) for i in range(60)]
    base, new = _run(rng, pool), _run(rng, pool, degrade=0.1)
    r = paired_test(per_question(base), per_question(new), samples=2000)
    assert r.drop > 0
    ok, message = describe("overall", r, tolerance=0.5, alpha=0.05)
    assert ok and "within allowed drop" in message


def test_sign_flip_is_exact_for_few_questions():
    # 3 positive differences: only the identity assignment reaches the observed sum (1 of 8)
    assert sign_flip_p([0.5, 0.25, 1.0]) == (0.125, True)
    assert sign_flip_p([0.0, 0.0]) == (1.0, True)  # no change at all: nothing to explain
    assert sign_flip_p([]) == (1.0, True)
    assert sign_flip_p([0.3] * 20) == (2.0**-20, True)  # equal values are grouped: still exact
    many = [0.01 * i for i in range(1, 41)]  # 2^40 assignments: seeded random ones
    p, exact = sign_flip_p(many, samples=500, seed=3)
    assert not exact and p == pytest.approx(1 / 501)
    assert sign_flip_p(many, samples=500, seed=3) == (p, exact)  # fixed seed: same answer


def test_drivers_are_the_questions_that_dropped_most_and_trials_are_averaged():
    base = [SimpleNamespace(question_id=q, track="silence", s_adj=1.0) for q in ("a", "b", "c")]
    new = [
        SimpleNamespace(question_id="a", track="silence", s_adj=0.0),
        SimpleNamespace(question_id="a", track="silence", s_adj=1.0),  # a second trial: mean 0.5
        SimpleNamespace(question_id="b", track="silence", s_adj=0.2),
        SimpleNamespace(question_id="c", track="silence", s_adj=1.0),
        SimpleNamespace(question_id="d", track="silence", s_adj=0.0),
    ]  # not in the baseline: not paired
    r = paired_test(per_question(base), per_question(new))
    assert r.n == 3 and [d[0] for d in r.drivers] == ["b", "a"]
    assert r.drop == pytest.approx((0.5 + 0.8 + 0.0) / 3)
    ok, message = describe("silence", r, tolerance=0.0, alpha=0.5)
    assert not ok and "driven by b (1.000 → 0.200), a (1.000 → 0.500)" in message
