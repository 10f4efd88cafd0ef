"""Counterfactual candidates: positives from causal edges, negatives from distractor pairs.

As-of is the latest of the effect time and the creation of every cause and effect
artifact, so all evidence is inside the horizon and the oracle can reach it. Pairs
whose cause or effect has no artifact in the corpus are skipped: nothing would let
an agent find those events.
"""

from __future__ import annotations

import hashlib
import heapq
from typing import Any

from ..contract.models import EvaluationConfig
from ..contract.paths import render_template
from ..graph.build import EventGraph
from ..store.store import to_utc
from .balance import Candidate, difficulty_of
from .model import NO_MECHANISM, CounterfactualTruth
from .text import describe, names

DAY_US = 86_400_000_000


def pool(eg: EventGraph, ev: EvaluationConfig, seed: int) -> list[tuple[Any, bool]]:
    """A bounded, seeded sample of edges and distractors per (spec, polarity): enough for
    every cap, so text and leakage checks run on hundreds of pairs, not every edge."""
    keep = max(8, 2 * ev.max_per_event_type)
    groups: dict[tuple[str, bool], list] = {}
    for rec, positive in [(e, True) for e in eg.causal_edges] + [(d, False) for d in eg.distractors]:
        groups.setdefault((rec.spec, positive), []).append(rec)
    out = []
    for (spec, positive) in sorted(groups):
        # seeded_hash(seed, "counterfactual", spec, cause, effect), with the shared prefix hashed once
        prefix = hashlib.sha256(f"{seed}\x1fcounterfactual\x1f{spec}\x1f".encode())

        def order(r: Any) -> tuple[str, Any]:
            h = prefix.copy()
            h.update(f"{r.cause_event_id}\x1f{r.effect_event_id}".encode())
            return h.hexdigest(), r

        out += [(r, positive) for r in heapq.nsmallest(keep, groups[(spec, positive)], key=order)]
    return out


def candidates(eg: EventGraph, ev: EvaluationConfig, ambiguous_ids: set[str],
               artifacts: dict[str, tuple[str, int | None]], seed: int,
               pairs: list[tuple[Any, bool]] | None = None) -> tuple[list[Candidate], dict[str, int]]:
    """Candidates from ``pairs`` (default: :func:`pool`)."""
    skipped: dict[str, int] = {}
    specs = {s.name: s for s in ev.causal_links}
    gates = ev.gates.get("counterfactual", [])
    pairs = pool(eg, ev, seed) if pairs is None else pairs
    out = []
    for rec, positive in pairs:
        spec = specs[rec.spec]
        cause, effect = eg.events[rec.cause_event_id], eg.events[rec.effect_event_id]
        if not cause.artifacts or not effect.artifacts:
            skipped["no_artifacts"] = skipped.get("no_artifacts", 0) + 1
            continue
        if cause.id in ambiguous_ids or effect.id in ambiguous_ids:
            skipped["ambiguous_description"] = skipped.get("ambiguous_description", 0) + 1
            continue
        evidence = sorted(set(cause.artifacts) | set(effect.artifacts))
        created = [artifacts[a][1] for a in evidence if artifacts.get(a) and artifacts[a][1] is not None]
        as_of = max([effect.ts_us, cause.ts_us, *created])
        subs = sorted({artifacts[a][0] for a in evidence if a in artifacts})
        multi = positive and rec.multi_cause
        factors = multi + (effect.ts_us - cause.ts_us > DAY_US) + (len(subs) > 1)
        truth = CounterfactualTruth(
            outcome_changed=spec.outcome_changed if positive else False,
            causal_mechanism=spec.name if positive else NO_MECHANISM,
            mechanism_aliases=sorted(spec.mechanism_aliases) if positive else [],
            mechanism_direction="cause_to_effect" if positive else "no_causal_link",
            cause_event_id=cause.id, effect_event_id=effect.id, cause_event_type=cause.type,
            effect_event_type=effect.type, actors=sorted(set(cause.actors) | set(effect.actors)),
            evidence_artifacts=evidence, cause_artifacts=sorted(cause.artifacts),
            effect_artifacts=sorted(effect.artifacts), multi_cause=multi)
        prefer = [j.cause for j in spec.join]
        premise = (render_template(spec.premise_template, cause.record) if spec.premise_template else None) \
            or f"{describe(cause.type, cause.record, prefer)} had not happened"
        outcome = render_template(spec.outcome_template, effect.record) if spec.outcome_template else None
        payload: dict[str, Any] = {
            "truth": truth, "actor": None, "as_of": to_utc(as_of), "gates": list(gates),
            "context_subsystems": subs, "event_type": effect.type, "spec": spec.name,
            "names": names(cause.record, effect.record),
            "slots": {"premise": premise,
                      "effect": describe(effect.type, effect.record, [j.effect for j in spec.join]),
                      "hint": f" (for example, would it be that {outcome})" if outcome else ""},
        }
        out.append(Candidate(key=f"counterfactual|{rec.spec}|{cause.id}|{effect.id}",
                             bucket="positive" if positive else "negative", label=truth.outcome_changed,
                             difficulty=difficulty_of(factors), event_type=effect.type, group=spec.name,
                             unique=effect.id, payload=payload))
    return out, skipped
