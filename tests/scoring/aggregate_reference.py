"""The run aggregate as it was before the column pass (commit cd5e53e), kept verbatim as the
reference that ``groundeval.scoring.aggregate.aggregate`` must equal (tests/scoring/test_scoring_aggregate_columns.py).
Since issue 32: a zero-shot score's calls are not judged units for the compliance tier, and the
report counts errored and empty episodes (marked "issue 32" below); since issue 30 neither are
the calls of a tool episode without a search or fetch (``no_retrieval``)."""

from __future__ import annotations

import operator
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from groundeval.contract.models import ScoringConfig
from groundeval.scoring.aggregate import (
    CI_FIELDS,
    FAILURE_CLASSES,
    FLAG_KINDS,
    MEAN_FIELDS,
    binomial,
    _ordered,
    _percentile,
    _r,
    _zero_shot,
    compliance_tier,
)
from groundeval.scoring.model import GroupStats, QuestionScore, RunReport
from groundeval.tracks import names as track_names


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
    "mode",  # issue 32
    "failures",  # issue 32
    "no_retrieval",  # issue 30
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
        compliance_tier=compliance_tier(  # issue 32: a zero-shot episode's calls are its answers only
            v,
            config.tiers,
            units=sum(  # issue 30: nor a tool episode's that never searched or fetched
                u
                for m, none, u in zip(col("mode"), col("no_retrieval"), col("v_units"))
                if m != "zero-shot" and not none
            ),
            answered=sum(col("answered")),
        ),
        violation_rates={k: _r(c / units) if units else 0.0 for k, c in kinds.items()},
        hallucinated_ids=sum(map(len, col("hallucinated_ids"))),
        mean_coverage=mean(covs) if covs else None,
        failure_classes=classes,
        ci95=_bootstrap_columns(ci_cols, samples, rng) if rng is not None else {},
    )


def aggregate_reference(
    questions: Sequence[Any] | None,
    traces: Sequence[Any] | None,
    scores: Sequence[QuestionScore],
    *,
    seed: int = 0,
    zero_shot: Any = None,
    config: ScoringConfig | None = None,
    bootstrap_samples: int = 1000,
    profile: str | None = None,
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
    from groundeval.scoring.trials import trial_report

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
        errored_episodes=sum("errored" in s.failures for s in ordered),  # issue 32
        empty_episodes=sum("empty" in s.failures for s in ordered),  # issue 32
    )
