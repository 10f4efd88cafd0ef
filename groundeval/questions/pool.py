"""Candidate phases the graph-record tracks (Counterfactual, Silence) share: a seeded,
bounded sample of records per group, counted skips, and an as-of late enough that every
artifact a question relies on exists."""

from __future__ import annotations

import hashlib
import heapq
from typing import Any, Callable, Hashable, Iterable, TypeVar

R = TypeVar("R")


def seeded_sample(
    records: Iterable[R],
    group: Callable[[R], tuple[str, Hashable]],
    parts: Callable[[R], str],
    seed: int,
    track: str,
    keep: int,
) -> list[R]:
    """At most ``keep`` records per ``group(r)`` = (spec, polarity), the smallest by
    ``seeded_hash(seed, track, spec, parts(r))`` (then by record), groups in sorted order:
    enough for every cap, so text and leakage checks run on hundreds of records, not all."""
    groups: dict[tuple[str, Hashable], list[R]] = {}
    for r in records:
        groups.setdefault(group(r), []).append(r)
    out: list[R] = []
    sha256 = hashlib.sha256
    for spec, polarity in sorted(groups):
        prefix = f"{seed}\x1f{track}\x1f{spec}\x1f".encode()
        # raw digests order exactly as their hex texts do (same length, order-preserving digits)
        keyed = [(sha256(prefix + parts(r).encode()).digest(), r) for r in groups[(spec, polarity)]]
        out += [r for _, r in heapq.nsmallest(keep, keyed)]
    return out


def sample_size(ev: Any) -> int:
    """How many records per group the graph-record tracks sample: enough for every cap."""
    return max(8, 2 * ev.max_per_event_type)


def skip(skipped: dict[str, int], reason: str) -> None:
    """Count one candidate set aside for ``reason``."""
    skipped[reason] = skipped.get(reason, 0) + 1


def covering_as_of(base_us: int, artifact_ids: Iterable[str], artifacts: dict[str, tuple[str, Any]]) -> int:
    """The later of ``base_us`` and the creation of every known artifact among ``artifact_ids``."""
    created = [artifacts[a][1] for a in artifact_ids if artifacts.get(a) and artifacts[a][1] is not None]
    return max([base_us, *created])
