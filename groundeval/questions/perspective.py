"""Perspective candidates: could an actor have known about an event as of a moment?

Labels come from the visibility cone (``store/cone.py``'s ``gate_sql``, one batch
query for every candidate), with the track's configured gates:

* ``positive`` — the target event happened by as-of and at least one of its
  artifacts is inside the gates at as-of;
* ``negative_permission`` — the event happened and every target artifact existed by
  as-of, but none is visible (subsystem or actor gate);
* ``negative_temporal`` — every target artifact was created after as-of, and at
  least one would be visible once all of them exist (the cone evaluated at the
  later of the event time and the last creation time).

Other candidates (artifacts straddling as-of, or an event after as-of whose
artifacts already existed) are skipped: no label is clean for them. Pivots are quantiles of each actor's own activity.
"""

from __future__ import annotations

import json
from math import ceil
from typing import Any

from ..contract.models import EvaluationConfig
from ..store.graph_sql import GraphSQL
from ..store.store import to_utc
from .balance import Candidate, difficulty_of
from .model import PerspectiveTruth
from .text import names

BUCKETS = ("positive", "negative_permission", "negative_temporal")
NEAR_US = 2 * 86_400_000_000


def candidates(gs: GraphSQL, ev: EvaluationConfig, ambiguous_ids: set[str],
               display: dict[str, str]) -> tuple[list[Candidate], dict[str, int]]:
    skipped: dict[str, int] = {}
    gates = set(ev.gates.get("perspective", []))
    limit = max(4, 2 * ceil(max(ev.max_perspective_questions, 1) / ev.max_per_actor))
    actors = gs.perspective_actors(ev.perspective_actors, limit)
    pivots = gs.perspective_pivots(actors, ev.perspective.pivots_per_actor)
    rows = [r for r in gs.perspective_candidates(pivots) if r[2] not in ambiguous_ids]
    if not rows:
        return [], skipped
    info = {r[0]: r for r in gs.events_info({r[2] for r in rows})}
    pairs = [(str(i), actor, as_of, aid) for i, (actor, as_of, eid) in enumerate(rows) for aid in info[eid][5]]
    by_key: dict[str, list[tuple]] = {}
    for key, aid, found, sub, h_ok, s_ok, a_ok in gs.gate_batch(pairs):
        if found:
            by_key.setdefault(key, []).append((aid, sub, h_ok, s_ok, a_ok))

    def visible(r: tuple) -> bool:
        _, _, h, s, a = r
        return (h or "horizon" not in gates) and (s or "subsystem" not in gates) and (a or "actor" not in gates)

    labelled: dict[int, tuple[str, list[str]]] = {}
    later: list[tuple[str, str, int, str]] = []
    for i, (actor, as_of, eid) in enumerate(rows):
        arts = by_key.get(str(i), [])
        vis = [r[0] for r in arts if visible(r)]
        happened = info[eid][2] <= as_of
        if vis and happened:
            labelled[i] = ("positive", vis)
        elif not vis and happened and ("horizon" not in gates or all(r[2] for r in arts)):
            labelled[i] = ("negative_permission", [])
        elif "horizon" in gates and not any(r[2] for r in arts):
            t_star = max(info[eid][2], info[eid][7] or info[eid][2])
            later += [(str(i), actor, t_star, r[0]) for r in arts]
        else:
            skipped["mixed_horizon"] = skipped.get("mixed_horizon", 0) + 1  # neither label is clean
    would = {k for k, _aid, found, _s, h, s, a in gs.gate_batch(later) if found and visible((_aid, _s, h, s, a))}
    for key in sorted({p[0] for p in later}, key=int):
        if key in would:
            labelled[int(key)] = ("negative_temporal", [])
        else:
            skipped["never_visible"] = skipped.get("never_visible", 0) + 1

    roles = gs.roles_batch(pivots)
    granted = gs.granted_batch(pivots)
    out = []
    for i in sorted(labelled):
        actor, as_of, eid = rows[i]
        bucket, vis = labelled[i]
        _, etype, ets, raw, ev_actors, _arts, _subs, _mc = info[eid]
        arts = by_key.get(str(i), [])
        blocked = sorted({r[1] for r in arts if "subsystem" in gates and not r[3]})
        subs = sorted({r[1] for r in arts})
        factors = (actor not in ev_actors) + (len(subs) > 1 or 0 < len(vis) < len(arts)) + \
            (abs(ets - as_of) <= NEAR_US)
        record = json.loads(raw)
        truth = PerspectiveTruth(could_actor_have_known=bucket == "positive", target_event_id=eid,
                                 target_event_type=etype, target_artifacts=sorted(r[0] for r in arts),
                                 evidence_artifacts=sorted(vis), blocked_subsystems=blocked,
                                 role_at_as_of=roles.get((actor, as_of), []))
        payload: dict[str, Any] = {
            "truth": truth, "actor": actor, "as_of": to_utc(as_of), "gates": sorted(gates, key=_gate_order),
            "context_subsystems": sorted(set(granted.get((actor, as_of), [])) | set(subs)),
            "record": record, "names": names(record), "event_type": etype,
            "slots": {"actor": display.get(actor, actor)},
        }
        out.append(Candidate(key=f"perspective|{actor}|{as_of}|{eid}", bucket=bucket,
                             label=bucket == "positive", difficulty=difficulty_of(factors), event_type=etype,
                             actor=actor, group=etype, payload=payload))
    return out, skipped


def _gate_order(g: str) -> int:
    return ("horizon", "subsystem", "actor").index(g)
