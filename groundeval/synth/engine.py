"""The engine every synthetic style drives: the time line (:data:`START`, :func:`iso_writer`),
the cast of actors active at a time, a block's sink of lines, weighted picks, and
:func:`drive`, the schedule of one block. A style (:class:`Style`) is built on it: the
default one in ``generate.py``, the paper's in ``paper.py``; ``generate.py`` chooses among
them and writes the org."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from .shape import BOTS, ROLES, actor_windows

START = datetime(2026, 1, 5, tzinfo=timezone.utc)


def _iso_day_prefixes(days: int) -> list[str]:
    return [(START + timedelta(days=d)).strftime("%Y-%m-%d") for d in range(days + 2)]


def _below(rng: random.Random, n: int) -> int:
    """A uniform index below ``n`` (cheaper than ``randrange``; seeded like everything else)."""
    return int(rng.random() * n)


@dataclass(frozen=True)
class Style:
    """What differs between styles; everything else (cast, access, writer, blocks, workers) is shared.

    ``specs(fmt)`` returns the causal link and silence pair specs as manifest dicts;
    ``generate(rng, cast, sink, quota, days, counts, block, n_blocks)`` writes one block
    of exactly ``quota`` events; ``flows`` names the instance counters (plus ``chatter``)."""

    name: str
    flows: tuple[str, ...]
    tail_hours: Callable[[], float]
    specs: Callable[[str], tuple[list[dict[str, Any]], list[dict[str, Any]]]]
    generate: Callable[..., None]
    make_sink: Callable[[Path, str], "_Sink"]
    summary: str = ""


class _Cast:
    """Actors per role with their windows in seconds, for picking someone active at a time."""

    def __init__(self, days: int):
        self.by_role: dict[str, list[tuple[str, float, float]]] = {}
        bots = {b for b, _ in BOTS}
        for name, windows in actor_windows(days).items():
            if name in bots:
                continue
            for w in windows:
                lo = w.get("since", -1) * 86400.0 if "since" in w else float("-inf")
                hi = w["until"] * 86400.0 if "until" in w else float("inf")
                self.by_role.setdefault(w["role"], []).append((name, lo, hi))
        self.internal = sorted(r for r, v in ROLES.items() if not v.get("external"))

    def pick(self, rng: random.Random, role: str, t: float, n: int = 1) -> list[str]:
        pool = self.by_role[role]
        out: list[str] = []
        for _ in range(40):
            name, lo, hi = pool[_below(rng, len(pool))]
            if lo <= t < hi and name not in out:
                out.append(name)
                if len(out) == n:
                    return out
        for name, lo, hi in pool:  # rare: fall back to a scan in cast order
            if lo <= t < hi and name not in out:
                out.append(name)
                if len(out) == n:
                    return out
        raise RuntimeError(f"no active {role} at t={t}")


WARMUP_ROUNDS = 3  # the first instances cycle through every workflow this many times


class _Sink:
    """Collects one block's lines; artifacts go to files directly in the original format."""

    def __init__(self, out: Path, fmt: str):
        self.out, self.fmt = out, fmt
        self.events: list[str] = []
        self.artifacts: list[str] = []
        self.folders: set[str] = set()
        self.n_events = self.n_artifacts = 0
        self._dumps: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode

    def event(self, rec: dict[str, Any]) -> None:
        self.events.append(self._dumps(rec))
        self.n_events += 1

    def finish(self) -> None:
        """Called once the block is complete (a style may reorder its lines here)."""

    def artifact(self, rec: dict[str, Any]) -> None:
        self.n_artifacts += 1
        if self.fmt == "native":
            self.artifacts.append(self._dumps(rec))
            return
        sub = rec["subsystem"]
        folder = self.out / "artifacts" / sub
        if sub not in self.folders:
            folder.mkdir(parents=True, exist_ok=True)
            self.folders.add(sub)
        body = {k: v for k, v in rec.items() if k not in ("id", "subsystem")}
        with open(folder / f"{rec['id']}.json", "w", encoding="utf-8", newline="\n") as fh:
            fh.write(self._dumps(body) + "\n")


def iso_writer(days: int) -> Callable[[float], str]:
    """Seconds since :data:`START` -> ``YYYY-MM-DDTHH:MM:SSZ`` (no datetime objects per event)."""
    prefixes = _iso_day_prefixes(days + 30)

    def iso(t: float) -> str:
        s = int(t)
        d, rem = divmod(s, 86400)
        h, rem = divmod(rem, 3600)
        m, sec = divmod(rem, 60)
        return f"{prefixes[d]}T{h:02d}:{m:02d}:{sec:02d}Z"

    return iso


def cumulative(weights: Sequence[float]) -> list[float]:
    out, acc = [], 0.0
    for x in weights:
        acc += x
        out.append(acc)
    return out


def pick_cumulative(rng: random.Random, cum: list[float]) -> int:
    r = rng.random() * cum[-1]
    k = 0
    while k < len(cum) - 1 and r >= cum[k]:
        k += 1
    return k


def drive(
    rng: random.Random,
    w: _Sink,
    n_events: int,
    *,
    weights: Sequence[float],
    chatter_weight: float,
    mean_events: float,
    span_seconds: float,
    block: int,
    n_blocks: int,
    max_events: Sequence[int],
    instance: Callable[[int, float], None],
    chatter: Callable[[float, int], None],
) -> None:
    """The schedule shared by every style: exactly ``n_events`` events in this block's time slice.

    Instance start times are stratified over the slice (then uniform once the estimate
    of the number of instances is used up); each draw picks a workflow by weight, or
    chatter. ``instance(k, t0)`` writes an instance of workflow ``k`` (at most
    ``max_events[k]`` events); ``chatter(t0, remaining)`` writes between 1 and
    ``remaining`` events. The first instances of block 0 cycle through every workflow."""
    cum = cumulative(list(weights) + [chatter_weight])
    n_flows = len(weights)
    est_instances = max(1, int(n_events / mean_events))
    span = span_seconds / n_blocks
    origin = block * span
    i = 0
    while w.n_events < n_events:
        u = rng.random()
        t0 = origin + ((i + u) * span / est_instances if i < est_instances else u * span)
        i += 1
        k = pick_cumulative(rng, cum)
        if block == 0 and i <= WARMUP_ROUNDS * n_flows:
            k = (i - 1) % n_flows  # every workflow occurs, even in a small org
        remaining = n_events - w.n_events
        if k < n_flows and max_events[k] <= remaining:
            instance(k, t0)
        else:
            chatter(t0, remaining)
