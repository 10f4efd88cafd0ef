"""Shortcut audit: how well trivial strategies answer a question set, per track.

A set is only informative when none of these beats a coin by much: always yes,
always no, and the in-sample majority label per actor, per event type and per
template (an upper bound for any strategy that reads only that surface feature).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable

from .model import Question

STRATEGIES = ("always_yes", "always_no", "majority_per_actor", "majority_per_event_type", "majority_per_template")


def label_of(q: Question) -> bool:
    t = q.ground_truth
    if t.track == "perspective":
        return t.could_actor_have_known
    if t.track == "counterfactual":
        return t.outcome_changed
    return t.exists


def _majority(items: list[tuple[Any, bool]]) -> float:
    groups: dict[Any, Counter] = defaultdict(Counter)
    for key, label in items:
        groups[key][label] += 1
    return sum(max(c.values()) for c in groups.values()) / len(items)


def shortcut_audit(questions: Iterable[Question]) -> dict[str, Any]:
    by_track: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_track[q.track].append(q)
    out: dict[str, Any] = {}
    for track in sorted(by_track):
        qs = by_track[track]
        labels = [label_of(q) for q in qs]
        yes = sum(labels) / len(qs)
        row = {
            "questions": len(qs),
            "always_yes": yes,
            "always_no": 1 - yes,
            "majority_per_actor": _majority([(q.actor, label_of(q)) for q in qs]),
            "majority_per_event_type": _majority([(q.meta.get("event_type"), label_of(q)) for q in qs]),
            "majority_per_template": _majority([(q.template_id, label_of(q)) for q in qs]),
        }
        row = {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}
        row["best_trivial"] = max(row[s] for s in STRATEGIES)
        out[track] = row
    return out
