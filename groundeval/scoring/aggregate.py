"""Run-level aggregation: ``aggregate(questions, traces, scores) -> RunReport``.

Scores are put into a canonical order first, so the report (bootstrap intervals
included) does not depend on the order traces were written in.
"""

from __future__ import annotations

import math
import operator
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import groupby
from typing import Any

from ..gc_pause import collector_paused
from ..contract.models import ScoringConfig
from ..questions.model import Question
from ..trace.model import Trace
from ..tracks import names as track_names
from .model import FAILURE_CLASSES, FLAG_KINDS, GroupStats, QuestionScore, RunReport, ZeroShotFloor
from .score import EMPTY, ERRORED

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
    scores = list(scores)
    heads = list(map(_HEAD, scores))
    return list(_gather(scores, _order(scores, [(t, q, a or "", m, tr) for t, q, a, m, tr in heads])))


_HEAD = operator.attrgetter("track", "question_id", "agent", "mode", "trial")


def _order(scores: Sequence[QuestionScore], heads: list[tuple]) -> list[int]:
    """The positions of ``scores`` in canonical order (:func:`_sort_key`), given each score's
    head (the key without the JSON tie-break): a stable sort of the heads, then each run of
    equal heads sorted by the scores' JSON."""
    order = sorted(range(len(heads)), key=heads.__getitem__)
    try:
        if len(set(heads)) == len(heads):
            return order
    except TypeError:  # an unhashable value in a constructed score: look for ties one by one
        pass
    i, n = 0, len(order)
    while i < n:
        j, key = i + 1, heads[order[i]]
        while j < n and heads[order[j]] == key:
            j += 1
        if j - i > 1:
            order[i:j] = sorted(order[i:j], key=lambda k: scores[k].model_dump_json())
        i = j
    return order


def _gather(seq: Sequence[Any], idx: Sequence[int]) -> tuple:
    """``tuple(seq[i] for i in idx)``, in C."""
    if len(idx) > 1:
        return operator.itemgetter(*idx)(seq)
    return (seq[idx[0]],) if idx else ()


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
    return _bootstrap_counts(Counter(zip(*columns)), n, samples, rng)


def _bootstrap_counts(counts: Counter, n: int, samples: int, rng: random.Random) -> dict[str, list[float]]:
    """:func:`_bootstrap_columns` from the count of each distinct tuple of CI fields (in the
    order of their first row, each kept as its first row holds it) over ``n`` rows."""
    if n == 0 or samples <= 0:
        return {}
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


# The fields of a score that the aggregate reads, pulled out of every score in one pass
# (one tuple per score, then one column per field): reading them once per statistic and
# slice cost more than the bootstrap.
_KEYS = ("track", "question_id", "agent", "mode", "trial", "bucket", "difficulty", "profile")
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
    "no_retrieval",
    "v_units",
    "v_bad",
    "flag_counts",
    "hallucinated_ids",
    "failure_class",
    "failures",
)
_READ = (*_KEYS, *_ROW)
_BY_KEY = operator.itemgetter(*_READ)  # a score's __dict__ -> its values of _READ
_BY_ATTR = operator.attrgetter(*_READ)
_RATES = ("answer_correct", "answered", "valid_answer", "path_valid", "state_invalid_correct")


def _read(scores: Sequence[QuestionScore]) -> dict[str, tuple]:
    """Every field of :data:`_READ` as a column, in the order of ``scores``."""
    if not scores:
        return {f: () for f in _READ}
    try:
        rows = list(map(_BY_KEY, map(vars, scores)))  # a field lookup in the dict: ~2x faster than attributes
    except (KeyError, TypeError):
        rows = list(map(_BY_ATTR, scores))
    return dict(zip(_READ, zip(*rows)))


def _stat_columns(cols: dict[str, Sequence[Any]]) -> dict[str, Sequence[Any]]:
    """The columns the statistics sum, derived once for all slices: each holds, per score,
    exactly the value the per-slice sums of :func:`_group_stats` add (same objects, same order)."""
    out = {f: cols[f] for f in (*MEAN_FIELDS, "coverage", "n_calls", "v_units", "v_bad", "failure_class")}
    out["answered_raw"] = cols["answered"]
    # the units that can show a gate respected: a zero-shot episode's only call is its answer, and
    # a tool episode without a search or fetch respected no gate it met
    out["evidence_units"] = [
        0 if m == "zero-shot" or none else u for m, none, u in zip(cols["mode"], cols["no_retrieval"], cols["v_units"])
    ]
    for f in _RATES:
        out[f] = list(map(float, cols[f]))
    flags = cols["flag_counts"]
    for k in FLAG_KINDS:
        out["flag:" + k] = list(map(operator.methodcaller("get", k, 0), flags))
    out["hallucinated"] = list(map(len, cols["hallucinated_ids"]))
    return out


def _ci_counts(cols: dict[str, Sequence[Any]]) -> Counter:
    """Each distinct tuple of CI fields (in :data:`CI_FIELDS` order) with its count."""
    return Counter(zip(cols["s_answer"], cols["s_traj"], cols["s_adj"], cols["answer_correct"], cols["valid_answer"]))


def group_stats(
    scores: Sequence[QuestionScore], config: ScoringConfig, *, samples: int = 0, rng: random.Random | None = None
) -> GroupStats:
    cols = _stat_columns(_read(scores))
    return _group_stats(cols, len(scores), config, samples=samples, rng=rng)


def _group_stats(
    cols: dict[str, Sequence[Any]],
    n: int,
    config: ScoringConfig,
    *,
    samples: int = 0,
    rng: random.Random | None = None,
    counts: Counter | None = None,
) -> GroupStats:
    """:func:`group_stats` over the slice's columns (:func:`_stat_columns`) of ``n`` scores;
    every sum runs in row order, so the figures are the same floats as summing over the
    scores. ``counts`` are the slice's :func:`_ci_counts` when already known."""

    def mean(xs: Sequence[float]) -> float:
        return _r(sum(xs) / len(xs)) if xs else 0.0

    units = sum(cols["v_units"])
    bad = sum(cols["v_bad"])
    v = bad / units if units else 0.0
    combined = sum(cols["s_combined"]) / n if n else 0.0
    kinds = {k: sum(cols["flag:" + k]) for k in FLAG_KINDS}
    covs = [c for c in cols["coverage"] if c is not None]
    means: dict[str, float | None] = {f: mean(cols[f]) for f in MEAN_FIELDS}
    means["coverage"] = mean(covs) if covs else None
    failure = cols["failure_class"]
    classes = {c: failure.count(c) for c in FAILURE_CLASSES}
    ci95: dict[str, list[float]] = {}
    if rng is not None and n and samples > 0:
        ci95 = _bootstrap_counts(_ci_counts(cols) if counts is None else counts, n, samples, rng)
    return GroupStats(
        n=n,
        means=means,
        accuracy=mean(cols["answer_correct"]),
        answered_rate=mean(cols["answered"]),
        valid_answer_rate=mean(cols["valid_answer"]),
        path_valid_rate=mean(cols["path_valid"]),
        state_invalid_correct_rate=mean(cols["state_invalid_correct"]),
        n_calls=sum(cols["n_calls"]),
        v_units=units,
        v_bad=bad,
        run_violation_rate=_r(v),
        run_s_adj=_r(combined * (1.0 - v) ** 2),
        compliance_tier=compliance_tier(
            v, config.tiers, units=sum(cols["evidence_units"]), answered=sum(cols["answered_raw"])
        ),
        violation_rates={k: _r(c / units) if units else 0.0 for k, c in kinds.items()},
        hallucinated_ids=sum(cols["hallucinated"]),
        mean_coverage=mean(covs) if covs else None,
        failure_classes=classes,
        ci95=ci95,
    )


def _slice(cols: dict[str, Sequence[Any]], idx: Sequence[int] | slice) -> dict[str, Sequence[Any]]:
    if isinstance(idx, slice):
        return {f: c[idx] for f, c in cols.items()}
    if len(idx) > 1:
        get = operator.itemgetter(*idx)  # made once for every column: it copies the positions
        return {f: get(c) for f, c in cols.items()}
    return {f: _gather(c, idx) for f, c in cols.items()}


def _slice_counts(track, bucket, difficulty, ci) -> tuple[Counter, dict, dict, dict]:
    """:func:`_ci_counts` of the whole run, of each track, of each (track, bucket) and each
    (track, difficulty), from one count over the run: the tuples of a slice are met in the
    order of their first row in it, as a count over the slice's own rows meets them."""
    whole: Counter = Counter()
    tracks: dict = {}
    buckets: dict = {}
    difficulties: dict = {}
    for key, c in Counter(zip(track, bucket, difficulty, *ci)).items():
        t, b, d, tup = key[0], key[1], key[2], key[3:]
        whole[tup] += c
        for counts, slot in ((tracks, t), (buckets, (t, b)), (difficulties, (t, d))):
            got = counts.get(slot)
            if got is None:
                got = counts[slot] = Counter()
            got[tup] += c
    return whole, tracks, buckets, difficulties


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
    with collector_paused():  # only acyclic tuples and lists are built; collections would rescan every live score
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
    scores = list(scores)
    order = _order(scores, [(t, q, a or "", m, tr) for t, q, a, m, tr in map(_HEAD, scores)])
    ordered = list(_gather(scores, order))
    cols = _read(ordered)  # canonical order from here on
    profiles = set(cols["profile"])
    if len(profiles) > 1:
        raise ValueError(f"scores of several profiles in one run: {', '.join(sorted(profiles))}")
    profile = profile or (profiles.pop() if profiles else "default")
    tracks, buckets, difficulties, overall = _slices(cols, cfg, bootstrap_samples, random.Random(seed))
    scored_ids = set(cols["question_id"])
    known_ids = {q.id for q in questions} if questions is not None else None
    trace_list = traces or []
    agents = sorted({a for a in cols["agent"] if a} | {t.agent for t in trace_list if t.agent})
    modes = sorted(set(cols["mode"]))
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
        trials=trial_report(ordered, seed=seed, samples=bootstrap_samples, track_order=track_names())
        if any(cols["trial"])
        else None,
        errored_episodes=sum(ERRORED in f for f in cols["failures"]),
        empty_episodes=sum(EMPTY in f for f in cols["failures"]),
    )


def _slices(
    cols: dict[str, Sequence[Any]], cfg: ScoringConfig, samples: int, rng: random.Random
) -> tuple[dict, dict, dict, GroupStats]:
    """The statistics of each track, (track, bucket), (track, difficulty) and the whole run,
    over columns in canonical order, drawing their bootstraps from ``rng`` in that order.
    A track's scores are consecutive in canonical order; a bucket's or difficulty's are
    gathered in row order."""
    n = len(cols["track"])
    stat = _stat_columns(cols)
    ci = [stat[f] for f in ("s_answer", "s_traj", "s_adj", "answer_correct", "valid_answer")]
    whole, by_track, by_bucket, by_difficulty = _slice_counts(cols["track"], cols["bucket"], cols["difficulty"], ci)
    spans, start = {}, 0
    for track, run in groupby(cols["track"]):
        size = sum(1 for _ in run)
        spans[track] = (start, start + size)
        start += size
    tracks, buckets, difficulties = {}, {}, {}
    for track in _ordered(spans, track_names()):
        a, b = spans[track]
        tracks[track] = _group_stats(
            _slice(stat, slice(a, b)), b - a, cfg, samples=samples, rng=rng, counts=by_track[track]
        )
        at_bucket = _positions(cols["bucket"], a, b)
        buckets[track] = {
            k: _group_stats(
                _slice(stat, at_bucket[k]), len(at_bucket[k]), cfg, samples=samples, rng=rng, counts=by_bucket[track, k]
            )
            for k in sorted(at_bucket)
        }
        at_difficulty = _positions(cols["difficulty"], a, b)
        difficulties[track] = {
            d: _group_stats(
                _slice(stat, at_difficulty[d]),
                len(at_difficulty[d]),
                cfg,
                samples=samples,
                rng=rng,
                counts=by_difficulty[track, d],
            )
            for d in _ordered(at_difficulty, ("easy", "medium", "hard"))
        }
    overall = _group_stats(stat, n, cfg, samples=samples, rng=rng, counts=whole)
    return tracks, buckets, difficulties, overall


def _positions(keys: Sequence[Any], start: int, stop: int) -> dict[Any, list[int]]:
    """Each value of ``keys[start:stop]`` -> its positions, in order."""
    out: dict[Any, list[int]] = {}
    for i in range(start, stop):
        k = keys[i]
        got = out.get(k)
        if got is None:
            out[k] = [i]
        else:
            got.append(i)
    return out
