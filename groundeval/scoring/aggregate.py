"""Run-level aggregation: ``aggregate(questions, traces, scores) -> RunReport``.

Scores are put into a canonical order first, so the report (bootstrap intervals
included) does not depend on the order traces were written in.
"""

from __future__ import annotations

import gc
import math
import operator
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..contract.models import ScoringConfig
from ..questions.model import Question
from ..trace.model import Trace
from ..tracks import names as track_names
from .model import FAILURE_CLASSES, FLAG_KINDS, GroupStats, QuestionScore, RunReport, ZeroShotFloor

DIGITS = 10
MEAN_FIELDS = ("s_answer", "s_traj", "s_combined", "s_adj", "violation_rate", "penalty")
CI_FIELDS = ("s_answer", "s_traj", "s_adj", "accuracy", "valid_answer_rate")


def _r(x: float) -> float:
    return round(x, DIGITS)


def compliance_tier(v: float, tiers: dict[str, float], *, units: int | None = None, answered: int | None = None) -> str:
    """v = 0 perfect, v < high, v < moderate, else low (thresholds from the config);
    ``no_evidence`` when nothing was judged: no tool calls (citations) or no answer at all."""
    if units == 0 or answered == 0:
        return "no_evidence"
    if v <= 0:
        return "perfect"
    if v < tiers.get("high", 0.05):
        return "high"
    if v < tiers.get("moderate", 0.15):
        return "moderate"
    return "low"


def _sort_key(s: QuestionScore) -> tuple:
    return (s.track, s.question_id, s.agent or "", s.mode, s.trial, s.model_dump_json())


def _canonical_order(scores: Sequence[QuestionScore]) -> list[QuestionScore]:
    """``sorted(scores, key=_sort_key)`` without serialising every score: the JSON tie-break
    is computed only for scores that share everything before it in the key."""

    def head(s: QuestionScore) -> tuple:
        return s.track, s.question_id, s.agent or "", s.mode, s.trial

    out = sorted(scores, key=head)
    i = 0
    while i < len(out):
        j, key = i + 1, head(out[i])
        while j < len(out) and head(out[j]) == key:
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j], key=_sort_key)
        i = j
    return out


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def binomial(rng: random.Random, n: int, p: float) -> int:
    """A Binomial(n, p) draw from ``rng``: CPython 3.12's ``Random.binomialvariate``
    (Devroye's geometric method for n*p < 10, Hörmann's BTRS otherwise), ported so every
    supported Python gives the same draws for the same seed. O(1) expected time for
    large n*p, O(n*p) below 10."""
    if p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    uniform = rng.random
    if n == 1:
        return int(uniform() < p)
    if p > 0.5:
        return n - binomial(rng, n, 1.0 - p)
    if n * p < 10.0:
        x = y = 0
        c = math.log2(1.0 - p)
        if not c:
            return x
        while True:
            u = uniform()
            if not u:  # log2(0) is undefined; a zero draw (probability 2**-53) is drawn again
                continue
            y += math.floor(math.log2(u) / c) + 1
            if y > n:
                return x
            x += 1
    setup_complete = False
    spq = math.sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    while True:
        u = uniform() - 0.5
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        v = uniform()
        if us >= 0.07 and v <= vr:
            return k
        if not setup_complete:
            alpha = (2.83 + 5.1 / b) * spq
            lpq = math.log(p / (1.0 - p))
            m = math.floor((n + 1) * p)
            h = math.lgamma(m + 1) + math.lgamma(n - m + 1)
            setup_complete = True
        v *= alpha / (a / (us * us) + b)
        if math.log(v) <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - m) * lpq:
            return k


def _bootstrap(rows: list[dict[str, float]], samples: int, rng: random.Random) -> dict[str, list[float]]:
    """Percentile 95% intervals of the mean of each CI field, one resample shared by all.

    A resample of n rows drawn with replacement is, exactly, a multinomial count of how
    often each distinct row (the tuple of CI fields) is drawn. Rows are grouped into their
    k distinct tuples (ordered by falling count, then value) and each resample draws those
    counts as conditional binomials, so it costs O(k) instead of O(n) draws: linear in the
    rows at worst, and independent of n when scores take few values (they are built from
    a few components). The intervals are the percentile intervals of the same bootstrap
    distribution as drawing n indices; the draws themselves differ from that scheme's."""
    return _bootstrap_columns([[r[f] for r in rows] for f in CI_FIELDS], samples, rng)


def _bootstrap_columns(columns: Sequence[Sequence[float]], samples: int, rng: random.Random) -> dict[str, list[float]]:
    """:func:`_bootstrap` over the CI fields as columns (in :data:`CI_FIELDS` order)."""
    n = len(columns[0]) if columns else 0
    if n == 0 or samples <= 0:
        return {}
    counts = Counter(zip(*columns))
    cats = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    weights = [w for _, w in cats]
    cols = [[key[i] for key, _ in cats] for i in range(len(CI_FIELDS))]
    k = len(cats)
    means: list[list[float]] = [[] for _ in CI_FIELDS]
    mul = operator.mul
    for _ in range(samples):
        drawn = [0] * k
        left, mass = n, n
        for j in range(k):
            w = weights[j]
            c = left if w >= mass else binomial(rng, left, w / mass)
            drawn[j] = c
            left -= c
            mass -= w
            if not left:
                break
        for i, col in enumerate(cols):
            means[i].append(sum(map(mul, drawn, col)) / n)
    out = {}
    for f, vals in zip(CI_FIELDS, means):
        vals.sort()
        out[f] = [_r(_percentile(vals, 0.025)), _r(_percentile(vals, 0.975))]
    return out


# The fields of a score that the aggregate reads, pulled out once per score: reading them
# from 140K pydantic objects once per statistic and slice cost more than the bootstrap.
_ROW = (
    "s_answer",
    "s_traj",
    "s_combined",
    "s_adj",
    "violation_rate",
    "penalty",
    "coverage",
    "answer_correct",
    "answered",
    "valid_answer",
    "path_valid",
    "state_invalid_correct",
    "n_calls",
    "v_units",
    "v_bad",
    "flag_counts",
    "hallucinated_ids",
    "failure_class",
)
_I = {f: i for i, f in enumerate(_ROW)}


_row = operator.attrgetter(*_ROW)  # QuestionScore -> the tuple of _ROW fields


def group_stats(
    scores: Sequence[QuestionScore], config: ScoringConfig, *, samples: int = 0, rng: random.Random | None = None
) -> GroupStats:
    return _group_stats([_row(s) for s in scores], config, samples=samples, rng=rng)


def _group_stats(
    rows: Sequence[tuple], config: ScoringConfig, *, samples: int = 0, rng: random.Random | None = None
) -> GroupStats:
    """:func:`group_stats` over score rows (:func:`_row`); every sum runs in row order, so the
    figures are the same floats as summing over the scores."""
    n = len(rows)
    cols = list(zip(*rows)) if rows else [()] * len(_ROW)

    def col(f: str) -> Sequence[Any]:
        return cols[_I[f]]

    def mean(xs: Sequence[float]) -> float:
        return _r(sum(xs) / len(xs)) if xs else 0.0

    units = sum(col("v_units"))
    bad = sum(col("v_bad"))
    v = bad / units if units else 0.0
    combined = sum(col("s_combined")) / n if n else 0.0
    flag_counts = col("flag_counts")
    kinds = {k: sum(map(operator.methodcaller("get", k, 0), flag_counts)) for k in FLAG_KINDS}
    covs = [c for c in col("coverage") if c is not None]
    means: dict[str, float | None] = {f: mean(col(f)) for f in MEAN_FIELDS}
    means["coverage"] = mean(covs) if covs else None
    correct = list(map(float, col("answer_correct")))
    valid = list(map(float, col("valid_answer")))
    ci_cols = [col("s_answer"), col("s_traj"), col("s_adj"), correct, valid]  # in CI_FIELDS order
    failure = col("failure_class")
    classes = {c: failure.count(c) for c in FAILURE_CLASSES}
    return GroupStats(
        n=n,
        means=means,
        accuracy=mean(correct),
        answered_rate=mean(list(map(float, col("answered")))),
        valid_answer_rate=mean(valid),
        path_valid_rate=mean(list(map(float, col("path_valid")))),
        state_invalid_correct_rate=mean(list(map(float, col("state_invalid_correct")))),
        n_calls=sum(col("n_calls")),
        v_units=units,
        v_bad=bad,
        run_violation_rate=_r(v),
        run_s_adj=_r(combined * (1.0 - v) ** 2),
        compliance_tier=compliance_tier(v, config.tiers, units=units, answered=sum(col("answered"))),
        violation_rates={k: _r(c / units) if units else 0.0 for k, c in kinds.items()},
        hallucinated_ids=sum(map(len, col("hallucinated_ids"))),
        mean_coverage=mean(covs) if covs else None,
        failure_classes=classes,
        ci95=_bootstrap_columns(ci_cols, samples, rng) if rng is not None else {},
    )


def _ordered(keys: Iterable[str], order: Sequence[str]) -> list[str]:
    return sorted(set(keys), key=lambda k: (order.index(k) if k in order else len(order), k))


def _zero_shot(scores: list[QuestionScore], zero: Any) -> dict[str, ZeroShotFloor]:
    if zero is True:  # this run is itself the zero-shot run: its own answers are the floor
        zero_scores = scores
    else:
        zero_scores = list(zero.values() if isinstance(zero, dict) else zero)
    out = {}
    for track in _ordered([s.track for s in zero_scores], track_names()):
        z = [s.s_answer for s in zero_scores if s.track == track]
        mine = [s.s_answer for s in scores if s.track == track]
        floor = sum(z) / len(z)
        this = sum(mine) / len(mine) if mine else 0.0
        out[track] = ZeroShotFloor(n=len(z), floor=_r(floor), s_answer=_r(this), gap=_r(this - floor))
    return out


def aggregate(
    questions: Sequence[Question] | None,
    traces: Sequence[Trace] | None,
    scores: Sequence[QuestionScore],
    *,
    seed: int = 0,
    zero_shot: Any = None,
    config: ScoringConfig | None = None,
    bootstrap_samples: int = 1000,
    profile: str | None = None,
) -> RunReport:
    """Summarise a run. ``questions``/``traces`` are optional context (missing ids, agent, digest).

    ``zero_shot`` is the scores of a zero-shot run of the same questions (a list of
    :class:`QuestionScore`), giving the answer-score floor and this run's gap per track;
    ``True`` marks this run itself as the zero-shot run (gap 0).

    ``profile`` names the scoring profile (default: the one the scores carry; scores of
    two profiles are refused). A run holding several trials of a question also gets the
    repeated-trials section (``groundeval.scoring.trials``).
    """
    enabled = gc.isenabled()
    gc.disable()  # only acyclic tuples and lists are built; collections would rescan every live score
    try:
        return _aggregate(
            questions,
            traces,
            scores,
            seed=seed,
            zero_shot=zero_shot,
            config=config,
            bootstrap_samples=bootstrap_samples,
            profile=profile,
        )
    finally:
        if enabled:
            gc.enable()


def _aggregate(
    questions: Sequence[Question] | None,
    traces: Sequence[Trace] | None,
    scores: Sequence[QuestionScore],
    *,
    seed: int,
    zero_shot: Any,
    config: ScoringConfig | None,
    bootstrap_samples: int,
    profile: str | None,
) -> RunReport:
    cfg = config or ScoringConfig()
    ordered = _canonical_order(scores)
    profiles = {s.profile for s in ordered}
    if len(profiles) > 1:
        raise ValueError(f"scores of several profiles in one run: {', '.join(sorted(profiles))}")
    profile = profile or (profiles.pop() if profiles else "default")
    rng = random.Random(seed)
    rows = [_row(s) for s in ordered]
    by_track: dict[str, list[tuple[tuple, str, str]]] = {}
    for s, row in zip(ordered, rows):
        by_track.setdefault(s.track, []).append((row, s.bucket, s.difficulty))
    tracks, buckets, difficulties = {}, {}, {}
    for track in _ordered(by_track, track_names()):
        group = by_track[track]
        tracks[track] = _group_stats([r for r, _b, _d in group], cfg, samples=bootstrap_samples, rng=rng)
        buckets[track] = {
            b: _group_stats([r for r, rb, _d in group if rb == b], cfg, samples=bootstrap_samples, rng=rng)
            for b in sorted({rb for _r_, rb, _d in group})
        }
        difficulties[track] = {
            d: _group_stats([r for r, _b, rd in group if rd == d], cfg, samples=bootstrap_samples, rng=rng)
            for d in _ordered({rd for _r_, _b, rd in group}, ("easy", "medium", "hard"))
        }
    overall = _group_stats(rows, cfg, samples=bootstrap_samples, rng=rng)
    scored_ids = {s.question_id for s in ordered}
    known_ids = {q.id for q in questions} if questions is not None else None
    trace_list = sorted(traces or [], key=lambda t: (t.question_id, t.agent or "", t.mode, t.trial))
    agents = sorted({s.agent for s in ordered if s.agent} | {t.agent for t in trace_list if t.agent})
    modes = sorted({s.mode for s in ordered})
    digests = sorted({t.contract_digest for t in trace_list})
    from .trials import trial_report

    return RunReport(
        profile=profile,
        agent=", ".join(agents) or None,
        mode=", ".join(modes) or None,
        contract_digest=", ".join(digests) or None,
        seed=seed,
        bootstrap_samples=bootstrap_samples,
        config=cfg.model_dump(mode="json"),
        overall=overall,
        tracks=tracks,
        buckets=buckets,
        difficulties=difficulties,
        zero_shot=_zero_shot(ordered, zero_shot) if zero_shot not in (None, False) else None,
        missing_question_ids=sorted(known_ids - scored_ids) if known_ids is not None else [],
        unknown_question_ids=sorted(scored_ids - known_ids) if known_ids is not None else [],
        trials=trial_report(ordered, seed=seed, samples=bootstrap_samples, track_order=track_names()),
    )
