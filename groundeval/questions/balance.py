"""Selection under balance and shortcut controls, deterministic for a seed.

Candidates are ordered by a seeded hash of their stable key (never by input order).
Bucket quotas follow the requested ratios (largest remainder); a bucket that runs
short leaves its places to the others in proportion to their ratios. Among the
eligible candidates of a bucket (caps per actor and per event type, at most one per
``unique`` value) the pick prefers, in order: actors and event types whose label
count is behind (so no per-actor or per-type majority emerges), the least used
stratum (``group``), the difficulty furthest behind its ratio, then hash order.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

DIFFICULTIES = ("easy", "medium", "hard")
_TRIM = 4  # candidates kept per (bucket, actor, event type, group, difficulty): plenty for any cap


def seeded_hash(seed: int, *parts: Any) -> str:
    return hashlib.sha256("\x1f".join([str(seed), *map(str, parts)]).encode()).hexdigest()


def difficulty_of(factors: int) -> str:
    """The documented rule: 0 complicating factors easy, 1 medium, 2 or more hard."""
    return DIFFICULTIES[min(factors, 2)]


@dataclass
class Candidate:
    key: str
    bucket: str
    label: bool
    difficulty: str
    event_type: str
    actor: str | None = None
    group: str = ""
    unique: str | None = None
    payload: Any = field(default=None, compare=False, repr=False)


def quotas(total: int, ratios: dict[str, float]) -> dict[str, int]:
    """Largest-remainder split of ``total`` by ``ratios`` (ties by bucket order)."""
    s = sum(ratios.values())
    if s <= 0 or total <= 0:
        return {b: 0 for b in ratios}
    exact = {b: total * r / s for b, r in ratios.items()}
    out = {b: int(v) for b, v in exact.items()}
    rest = total - sum(out.values())
    for b in sorted(ratios, key=lambda b: (-(exact[b] - out[b]), list(ratios).index(b)))[:rest]:
        out[b] += 1
    return out


@dataclass
class _Tally:
    """What has been picked so far, by the keys the caps and preferences read."""

    max_per_actor: int
    max_per_type: int
    difficulty_ratios: dict[str, float]
    rank: dict[int, int]  # id(candidate) -> its place in hash order
    picked: list[Candidate] = field(default_factory=list)
    n_bucket: Counter = field(default_factory=Counter)
    n_actor: Counter = field(default_factory=Counter)
    n_type: Counter = field(default_factory=Counter)
    n_actor_label: Counter = field(default_factory=Counter)
    n_type_label: Counter = field(default_factory=Counter)
    n_group: Counter = field(default_factory=Counter)
    n_diff: Counter = field(default_factory=Counter)
    used_unique: set[str] = field(default_factory=set)

    def eligible(self, c: Candidate) -> bool:
        return (
            (c.actor is None or self.n_actor[c.actor] < self.max_per_actor)
            and self.n_type[c.event_type] < self.max_per_type
            and (c.unique is None or c.unique not in self.used_unique)
        )

    def priority(self, c: Candidate) -> tuple:
        """Lowest first: label balance per actor and type, stratum use, difficulty need, hash order."""
        n_al, n_tl = self.n_actor_label, self.n_type_label
        actor_imb = (n_al[(c.actor, c.label)] - n_al[(c.actor, not c.label)]) if c.actor else 0
        type_imb = n_tl[(c.event_type, c.label)] - n_tl[(c.event_type, not c.label)]
        dsum = sum(self.difficulty_ratios.values()) or 1.0
        want = self.difficulty_ratios.get(c.difficulty, 0) / dsum * (len(self.picked) + 1) - self.n_diff[c.difficulty]
        return (
            max(actor_imb, type_imb, 0) >= 1,
            max(actor_imb, type_imb),
            actor_imb + type_imb,
            self.n_group[(c.bucket, c.group)],
            -want,
            self.rank[id(c)],
        )

    def add(self, c: Candidate) -> None:
        self.picked.append(c)
        self.n_bucket[c.bucket] += 1
        self.n_type[c.event_type] += 1
        self.n_type_label[(c.event_type, c.label)] += 1
        self.n_group[(c.bucket, c.group)] += 1
        self.n_diff[c.difficulty] += 1
        if c.actor is not None:
            self.n_actor[c.actor] += 1
            self.n_actor_label[(c.actor, c.label)] += 1
        if c.unique is not None:
            self.used_unique.add(c.unique)


def _eligible(pool: list[Candidate], tally: _Tally) -> list[Candidate]:
    """``[c for c in pool if tally.eligible(c)]``, with the caps read once."""
    n_actor, n_type, used, max_actor, max_type = (
        tally.n_actor,
        tally.n_type,
        tally.used_unique,
        tally.max_per_actor,
        tally.max_per_type,
    )
    return [
        c
        for c in pool
        if (c.actor is None or n_actor[c.actor] < max_actor)
        and n_type[c.event_type] < max_type
        and (c.unique is None or c.unique not in used)
    ]


def _reached_a_cap(c: Candidate, tally: _Tally) -> bool:
    """Whether picking ``c`` made some candidate ineligible: only its actor's count, its type's
    count and its ``unique`` value changed, and eligibility only ever narrows, so the pools
    need filtering again only when one of those reached its cap."""
    return (
        (c.actor is not None and tally.n_actor[c.actor] >= tally.max_per_actor)
        or tally.n_type[c.event_type] >= tally.max_per_type
        or c.unique is not None
    )


def _best(pool: list[Candidate], tally: _Tally) -> Candidate:
    """``min(pool, key=tally.priority)``: each candidate's priority is the same tuple, its
    parts read once per pick (label balance per actor and type, difficulty need)."""
    n_al, n_tl, n_group, rank = tally.n_actor_label, tally.n_type_label, tally.n_group, tally.rank
    dsum = sum(tally.difficulty_ratios.values()) or 1.0
    npick = len(tally.picked) + 1
    want = {d: tally.difficulty_ratios.get(d, 0) / dsum * npick - tally.n_diff[d] for d in {c.difficulty for c in pool}}
    best, best_key = None, None
    for c in pool:
        actor_imb = (n_al[(c.actor, c.label)] - n_al[(c.actor, not c.label)]) if c.actor else 0
        type_imb = n_tl[(c.event_type, c.label)] - n_tl[(c.event_type, not c.label)]
        top = max(actor_imb, type_imb)
        key = (
            max(top, 0) >= 1,
            top,
            actor_imb + type_imb,
            n_group[(c.bucket, c.group)],
            -want[c.difficulty],
            rank[id(c)],
        )
        if best_key is None or key < best_key:
            best, best_key = c, key
    assert best is not None
    return best


def _pools(order: list[Candidate], buckets: dict[str, float]) -> dict[str, list[Candidate]]:
    """Per bucket, candidates in hash order, at most ``_TRIM`` per (bucket, actor, type, group, difficulty)."""
    kept: Counter = Counter()
    pools: dict[str, list[Candidate]] = {b: [] for b in buckets}
    for c in order:
        k = (c.bucket, c.actor, c.event_type, c.group, c.difficulty)
        if c.bucket in pools and kept[k] < _TRIM:
            kept[k] += 1
            pools[c.bucket].append(c)
    return pools


def _next_bucket(
    open_: list[str],
    pools: dict[str, list[Candidate]],
    tally: _Tally,
    quota: dict[str, int],
    bucket_ratios: dict[str, float],
) -> str:
    """The bucket furthest behind its quota; once every quota is met, behind its ratio."""
    order = list(pools)
    short = [b for b in open_ if tally.n_bucket[b] < quota[b]]
    if short:
        return min(short, key=lambda b: ((tally.n_bucket[b] + 1) / quota[b], order.index(b)))
    weighted = [b for b in open_ if bucket_ratios[b] > 0] or open_
    return min(weighted, key=lambda b: ((tally.n_bucket[b] + 1) / (bucket_ratios[b] or 1e-9), order.index(b)))


def select(
    cands: list[Candidate],
    *,
    total: int,
    bucket_ratios: dict[str, float],
    difficulty_ratios: dict[str, float],
    max_per_actor: int,
    max_per_type: int,
    seed: int,
) -> tuple[list[Candidate], dict[str, Any]]:
    """Pick up to ``total`` candidates; returns them and an achieved-vs-requested report."""
    order = sorted(cands, key=lambda c: (seeded_hash(seed, c.key), c.key))
    pools = _pools(order, bucket_ratios)
    quota = quotas(total, bucket_ratios)
    tally = _Tally(max_per_actor, max_per_type, difficulty_ratios, {id(c): i for i, c in enumerate(order)})
    capped = True  # a cap may rule candidates out: the pools are filtered before the next pick
    while len(tally.picked) < total:
        if capped:
            for b in pools:
                pools[b] = _eligible(pools[b], tally)
        open_ = [b for b in pools if pools[b]]
        if not open_:
            break
        bucket = _next_bucket(open_, pools, tally, quota, bucket_ratios)
        c = _best(pools[bucket], tally)
        pools[bucket].remove(c)
        tally.add(c)
        capped = _reached_a_cap(c, tally)

    labels = {c.bucket: c.label for c in cands}
    rs = sum(bucket_ratios.values()) or 1.0
    requested_yes = sum(r for b, r in bucket_ratios.items() if labels.get(b)) / rs
    picked, trimmed = _trim(tally.picked, max(SHORTCUT_LIMIT, requested_yes, 1.0 - requested_yes))
    return picked, _report(cands, picked, trimmed, total, quota, bucket_ratios, difficulty_ratios)


def _report(
    cands: list[Candidate],
    picked: list[Candidate],
    trimmed: int,
    total: int,
    quota: dict[str, int],
    bucket_ratios: dict[str, float],
    difficulty_ratios: dict[str, float],
) -> dict[str, Any]:
    """Achieved against requested, per bucket and difficulty."""
    n_bucket = Counter(c.bucket for c in picked)
    n_diff = Counter(c.difficulty for c in picked)
    n = len(picked)
    rs = sum(bucket_ratios.values()) or 1.0
    dsum = sum(difficulty_ratios.values()) or 1.0
    return {
        "requested_total": total,
        "achieved_total": n,
        "trimmed_for_shortcuts": trimmed,
        "buckets": {
            b: {
                "requested_ratio": round(r / rs, 4),
                "quota": quota[b],
                "achieved": n_bucket[b],
                "achieved_ratio": round(n_bucket[b] / n, 4) if n else 0.0,
                "available": sum(1 for c in cands if c.bucket == b),
            }
            for b, r in bucket_ratios.items()
        },
        "difficulty": {
            d: {
                "requested_ratio": round(difficulty_ratios.get(d, 0) / dsum, 4),
                "achieved": n_diff[d],
                "achieved_ratio": round(n_diff[d] / n, 4) if n else 0.0,
            }
            for d in DIFFICULTIES
        },
    }


SHORTCUT_LIMIT = 0.6


def _majority(picked: list[Candidate], key) -> float:
    groups: dict[Any, Counter] = {}
    for c in picked:
        groups.setdefault(key(c), Counter())[c.label] += 1
    return sum(max(g.values()) for g in groups.values()) / len(picked)


def _shortcut(picked: list[Candidate], limit: float) -> tuple[float, float]:
    """How far trivial strategies exceed ``limit``: first always-yes/always-no against the
    label split, then per-actor / per-type majorities against the split they could exploit
    (compared in that order, so fixing the split is never traded for a group majority)."""
    if not picked:
        return 0.0, 0.0
    overall = _majority(picked, lambda c: None)
    group = max(_majority(picked, lambda c: c.actor), _majority(picked, lambda c: c.event_type))
    return max(0.0, overall - limit), max(0.0, group - max(limit, overall))


def _rounded(score: tuple[float, float]) -> tuple[float, float]:
    return round(score[0], 12), round(score[1], 12)


def _trim(picked: list[Candidate], limit: float) -> tuple[list[Candidate], int]:
    """Drop the fewest picks (latest first) until no trivial strategy beats ``limit``
    (``SHORTCUT_LIMIT``, or the label split the configured ratios request, if higher):
    a bucket's shortfall refilled from the other label, or small groups with odd sizes,
    otherwise leak a majority."""
    picked = list(picked)
    trimmed = 0
    while len(picked) > 2:
        now = _shortcut(picked, limit)
        if max(now) <= 1e-12:
            break
        best, best_score = None, _rounded(now)
        for i in range(len(picked) - 1, -1, -1):
            score = _rounded(_shortcut(picked[:i] + picked[i + 1 :], limit))
            if score < best_score:
                best, best_score = i, score
        if best is None:
            break
        picked.pop(best)
        trimmed += 1
    return picked, trimmed
