"""Silence candidates: verified absences and confirmed presences from the graph's records.

As-of is the latest of trigger + gap and the creation of every artifact the
question relies on (search space, response and trigger artifacts), so the whole
expected search space is reachable whatever gates are configured. Absences with an
empty search space are skipped (an honest "no" would have nothing to check), and so
are presences whose response has no artifact to cite.
"""

from __future__ import annotations

import hashlib
import heapq
from typing import Any

from ..contract.models import EvaluationConfig
from ..graph.build import EventGraph
from ..store.store import to_utc
from ..graph.records import SilenceRecord
from .balance import Candidate, difficulty_of
from .model import SilenceTruth
from .text import describe, format_gap, humanize, names


def pool(eg: EventGraph, ev: EvaluationConfig, seed: int) -> list[SilenceRecord]:
    """A bounded, seeded sample of silence records per (spec, kind): enough for every cap,
    so BM25 search spaces are computed for a few hundred records, not every trigger."""
    keep = max(8, 2 * ev.max_per_event_type)
    out: list[SilenceRecord] = []
    groups: dict[tuple[str, str], list[SilenceRecord]] = {}
    for r in eg.presences + eg.absences:
        groups.setdefault((r.spec, r.kind), []).append(r)
    for spec, kind in sorted(groups):
        # seeded_hash(seed, "silence", spec, trigger), with the shared prefix hashed once
        prefix = hashlib.sha256(f"{seed}\x1fsilence\x1f{spec}\x1f".encode())

        def order(r: SilenceRecord) -> tuple[str, str]:
            h = prefix.copy()
            h.update(r.trigger_event_id.encode())
            return h.hexdigest(), r.trigger_event_id

        out += heapq.nsmallest(keep, groups[(spec, kind)], key=order)
    return sorted(out)


def candidates(eg: EventGraph, ev: EvaluationConfig, ambiguous_ids: set[str],
               artifacts: dict[str, tuple[str, int | None]],
               records: list[SilenceRecord]) -> tuple[list[Candidate], dict[str, int]]:
    skipped: dict[str, int] = {}
    specs = {s.key: s for s in ev.silence_pairs}
    gates = ev.gates.get("silence", [])
    out = []
    for rec in records:
        spec = specs[rec.spec]
        trigger = eg.events[rec.trigger_event_id]
        exists = rec.kind == "presence"
        evidence = sorted(eg.events[rec.response_event_id].artifacts) if exists else []
        space = list(rec.expected_search_space)
        if not exists and not space:
            skipped["empty_search_space"] = skipped.get("empty_search_space", 0) + 1
            continue
        if exists and not evidence:
            skipped["no_response_artifacts"] = skipped.get("no_response_artifacts", 0) + 1
            continue
        if trigger.id in ambiguous_ids:
            skipped["ambiguous_description"] = skipped.get("ambiguous_description", 0) + 1
            continue
        used = set(space) | set(evidence) | set(trigger.artifacts)
        created = [artifacts[a][1] for a in used if artifacts.get(a) and artifacts[a][1] is not None]
        as_of = max([rec.trigger_ts_us + rec.gap_microseconds, *created])
        space_subs = {artifacts[a][0] for a in space if a in artifacts}
        factors = (len(space) >= 4) + (len(space_subs) > 1) + (len(trigger.artifacts) > 1)
        truth = SilenceTruth(exists=exists, spec=rec.spec, trigger_event_id=trigger.id,
                             trigger_event_type=trigger.type, response_event_type=rec.response_type,
                             response_event_id=rec.response_event_id, expected_search_space=space,
                             expected_subsystems=list(rec.expected_subsystems), evidence_artifacts=evidence)
        payload: dict[str, Any] = {
            "truth": truth, "actor": None, "as_of": to_utc(as_of), "gates": list(gates),
            "context_subsystems": sorted(set(rec.expected_subsystems)
                                         | {artifacts[a][0] for a in trigger.artifacts if a in artifacts}),
            "event_type": trigger.type, "spec": rec.spec, "names": names(trigger.record),
            "slots": {"trigger": describe(trigger.type, trigger.record, [j.trigger for j in spec.join]),
                      "response": f"'{humanize(rec.response_type)}' event",
                      "gap": format_gap(spec.max_gap_days)},
        }
        out.append(Candidate(key=f"silence|{rec.spec}|{trigger.id}", bucket=rec.kind, label=exists,
                             difficulty=difficulty_of(factors), event_type=trigger.type, group=rec.spec,
                             payload=payload))
    return out, skipped
