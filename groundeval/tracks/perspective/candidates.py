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

Only witnesses count (``witness.py``: artifacts the event references that were
created at or after it). A negative label for an actor who took part in the event by
as-of (one of its actors) is never asked: whoever was there knew, whatever they could
read, so such targets are skipped (``actor_took_part``). The texts say what the label
means: what the actor could open *at* as-of (access held before and lost by then does not
count). Other candidates (witnesses straddling as-of, or an event
after as-of whose witnesses already existed) are skipped: no label is clean for them.
Pivots are quantiles of each actor's own activity; per pivot and event type the
``sql.NEAREST`` witnessed events on each side of as-of are targets.

The target is named by ``subjects.py`` without its time (that would give temporal
answers away) and without its witnesses' ids (the evidence itself): per event type,
an artifact key that is a witness of any target of that type is never shown.
"""

from __future__ import annotations

import json
from collections import Counter
from math import ceil
from typing import Any, NamedTuple

from ...contract.models import EvaluationConfig
from ...graph.sql import GraphSQL
from ...questions.balance import Candidate, difficulty_of, seeded_hash
from ...questions.subjects import Role, Subject, SubjectIndex, keyed_values
from ...store.store import release_freed_memory, to_utc
from ...store.witness import is_witness
from . import sql
from .model import PerspectiveTruth

BUCKETS = ("positive", "negative_permission", "negative_temporal")
NEAR_US = 2 * 86_400_000_000
POOL_PER_GROUP = 2


class _Targets(NamedTuple):
    """The sampled pivots' targets with what labelling read about them."""

    rows: list[tuple[str, int, str]]  # (actor, as_of_us, event id)
    pivots: list[tuple[str, int]]
    info: dict[str, tuple]  # event id -> GraphSQL.events_info row
    created: dict[str, tuple[str, int | None]]  # artifact id -> (subsystem, created_us)
    wit: dict[str, list[str]]  # event id -> its witnesses (sorted)
    gated: dict[str, list[tuple]]  # row index (text) -> (artifact, subsystem, horizon, subsystem, actor ok)


class Pool(NamedTuple):
    """The labelled, sampled targets candidates are made of (``None`` targets: none)."""

    targets: _Targets | None
    labelled: dict[int, tuple[str, list[str]]]
    skipped: dict[str, int]


def pool(gs: GraphSQL, ev: EvaluationConfig, seed: int = 0) -> Pool:
    """The targets, their labels and the seeded sample that :func:`candidates` reads."""
    skipped: dict[str, int] = {}
    t = _targets(gs, ev)
    if t is None:
        return Pool(None, {}, skipped)
    labelled = _label(gs, t, set(ev.gates.get("perspective", [])), skipped)
    _sample(labelled, t, seed)
    return Pool(_kept(t, labelled), labelled, skipped)


def _kept(t: _Targets, labelled: dict[int, tuple[str, list[str]]]) -> _Targets:
    """``t`` as far as the sampled targets read it: the pool lives until the questions are
    worded, and every target's record text and cone (~10 MB at 22.5K events) is dead weight
    once a few hundred are kept. Row indices stay valid: the rows themselves are kept."""
    events = {t.rows[i][2] for i in labelled}
    info = {eid: t.info[eid] for eid in sorted(events)}
    arts = {a for r in info.values() for a in r[5]}
    return t._replace(
        info=info,
        created={a: t.created[a] for a in sorted(arts) if a in t.created},
        wit={eid: t.wit[eid] for eid in sorted(events)},
        gated={str(i): t.gated[str(i)] for i in sorted(labelled) if str(i) in t.gated},
    )


def subject_requests(p: Pool) -> list[tuple[str, Subject, Role]]:
    """The reference requests :func:`candidates` makes for ``p`` (to resolve with other tracks')."""
    return [] if p.targets is None else _requests(p.labelled, p.targets)


def candidates(
    gs: GraphSQL,
    ev: EvaluationConfig,
    subjects: SubjectIndex,
    seed: int = 0,
    p: Pool | None = None,
    requests: list[tuple[str, Subject, Role]] | None = None,
) -> tuple[list[Candidate], dict[str, int]]:
    """Candidates from ``p`` (default: :func:`pool`; ``requests``: its :func:`subject_requests`, if made)."""
    p = pool(gs, ev, seed) if p is None else p
    skipped, t, labelled = dict(p.skipped), p.targets, p.labelled
    gates = set(ev.gates.get("perspective", []))
    if t is None:
        return [], skipped
    refs = subjects.resolve(_requests(labelled, t) if requests is None else requests)
    roles = sql.actor_sets(gs, t.pivots, "roles")
    granted = sql.actor_sets(gs, t.pivots, "grants")
    out = []
    for i in sorted(labelled):
        ref = refs[t.rows[i][2]]
        if ref is None:
            skipped["ambiguous_reference"] = skipped.get("ambiguous_reference", 0) + 1
            continue
        out.append(_candidate(i, labelled[i], ref, t, gates, roles, granted, subjects.display))
    return out, skipped


def _targets(gs: GraphSQL, ev: EvaluationConfig) -> _Targets | None:
    """Actors, their pivots, each pivot's nearest witnessed events, and the cone of every
    (pivot, witness) pair in one batch."""
    limit = max(4, 2 * ceil(max(ev.max_perspective_questions, 1) / ev.max_per_actor))
    actors = sql.perspective_actors(gs, ev.perspective_actors, limit)
    pivots = sql.perspective_pivots(gs, actors, ev.perspective.pivots_per_actor)
    rows = sql.perspective_targets(gs, pivots)
    release_freed_memory(gs.cur)  # its window and ASOF joins held ~40 MB at 22.5K events: the cone is next
    if not rows:
        return None
    info = {r[0]: r for r in gs.events_info({r[2] for r in rows})}
    created = gs.artifacts_info({a for r in info.values() for a in r[5]})
    wit = {eid: sorted(a for a in r[5] if is_witness(created[a][1], r[2])) for eid, r in info.items()}
    pairs = [(str(i), actor, as_of, aid) for i, (actor, as_of, eid) in enumerate(rows) for aid in wit[eid]]
    gated: dict[str, list[tuple]] = {}
    for key, aid, found, sub, h_ok, s_ok, a_ok in sql.gate_batch(gs, pairs):
        if found:
            gated.setdefault(key, []).append((aid, sub, h_ok, s_ok, a_ok))
    return _Targets(rows, pivots, info, created, wit, gated)


def _visible(r: tuple, gates: set[str]) -> bool:
    """Inside every configured gate: ``r`` is (artifact, subsystem, horizon, subsystem, actor ok)."""
    _, _, h, s, a = r
    return (h or "horizon" not in gates) and (s or "subsystem" not in gates) and (a or "actor" not in gates)


def _label(gs: GraphSQL, t: _Targets, gates: set[str], skipped: dict[str, int]) -> dict[int, tuple[str, list[str]]]:
    """Row index -> (bucket, visible evidence) for every target with a clean label."""
    labelled: dict[int, tuple[str, list[str]]] = {}
    later: list[tuple[str, str, int, str]] = []
    for i, (actor, as_of, eid) in enumerate(t.rows):
        arts = t.gated.get(str(i), [])
        vis = [r[0] for r in arts if _visible(r, gates)]
        happened = t.info[eid][2] <= as_of
        if vis and happened:
            labelled[i] = ("positive", vis)
        elif happened and actor in t.info[eid][4]:
            # took part in it by as-of: a reader answers "yes" whatever the records say (the cone
            # grants nothing for taking part), so no "no" label is true on its face
            skipped["actor_took_part"] = skipped.get("actor_took_part", 0) + 1
        elif not vis and happened and ("horizon" not in gates or all(r[2] for r in arts)):
            labelled[i] = ("negative_permission", [])
        elif "horizon" in gates and not any(r[2] for r in arts):
            t_star = max([t.info[eid][2], *(t.created[r[0]][1] for r in arts)])
            later += [(str(i), actor, t_star, r[0]) for r in arts]
        else:
            skipped["mixed_horizon"] = skipped.get("mixed_horizon", 0) + 1  # neither label is clean
    would = {
        k for k, aid, found, sub, h, s, a in sql.gate_batch(gs, later) if found and _visible((aid, sub, h, s, a), gates)
    }
    for key in sorted({p[0] for p in later}, key=int):
        if key in would:
            labelled[int(key)] = ("negative_temporal", [])
        else:
            skipped["never_visible"] = skipped.get("never_visible", 0) + 1
    return labelled


def _sample(labelled: dict[int, tuple[str, list[str]]], t: _Targets, seed: int) -> None:
    """Keep a seeded sample per (bucket, actor, event type), like the other tracks' pools:
    enough for every cap, so references are resolved for hundreds of targets, not all."""
    kept: Counter = Counter()
    for i in sorted(labelled, key=lambda i: seeded_hash(seed, "perspective", *t.rows[i])):
        k = (labelled[i][0], t.rows[i][0], t.info[t.rows[i][2]][1])
        kept[k] += 1
        if kept[k] > POOL_PER_GROUP:
            del labelled[i]


def _requests(labelled: dict[int, tuple[str, list[str]]], t: _Targets) -> list[tuple[str, Subject, Role]]:
    """Each kept target's reference request, without its time and its witnesses: an artifact
    key that witnesses any target of a type is hidden for every target of it."""
    targets = sorted({t.rows[i][2] for i in labelled})
    records = {eid: json.loads(t.info[eid][3]) for eid in targets}
    hide: dict[str, set[tuple[str, str]]] = {}
    for eid in targets:
        hide.setdefault(t.info[eid][1], set()).update(
            k for k, vals in keyed_values(records[eid]).items() if k[0] == "a" and vals & set(t.wit[eid])
        )
    return [
        (
            eid,
            Subject(eid, t.info[eid][1], t.info[eid][2], records[eid], tuple(t.info[eid][4])),
            Role(time=False, hide=frozenset(hide[t.info[eid][1]]), forbid=frozenset(t.wit[eid])),
        )
        for eid in targets
    ]


def _candidate(
    i: int,
    label: tuple[str, list[str]],
    ref: Any,
    t: _Targets,
    gates: set[str],
    roles: dict,
    granted: dict,
    display: dict[str, str],
) -> Candidate:
    actor, as_of, eid = t.rows[i]
    bucket, vis = label
    _, etype, ets, _raw, ev_actors, _arts, _subs, _mc = t.info[eid]
    arts = t.gated.get(str(i), [])
    blocked = sorted({r[1] for r in arts if "subsystem" in gates and not r[3]})
    subs = sorted({r[1] for r in arts})
    factors = (actor not in ev_actors) + (len(subs) > 1 or 0 < len(vis) < len(arts)) + (abs(ets - as_of) <= NEAR_US)
    truth = PerspectiveTruth(
        could_actor_have_known=bucket == "positive",
        target_event_id=eid,
        target_event_type=etype,
        target_artifacts=sorted(r[0] for r in arts),
        evidence_artifacts=sorted(vis),
        blocked_subsystems=blocked,
        role_at_as_of=roles.get((actor, as_of), []),
    )
    payload: dict[str, Any] = {
        "truth": truth,
        "actor": actor,
        "as_of": to_utc(as_of),
        "gates": sorted(gates, key=_gate_order),
        "context_subsystems": sorted(set(granted.get((actor, as_of), [])) | set(subs)),
        "names": ref.values(),
        "event_type": etype,
        "refs": [ref.text()],
        "subjects": [ref.shown()],
        "slots": {"actor": display.get(actor, actor), "target": ref.text()},
    }
    return Candidate(
        key=f"perspective|{actor}|{as_of}|{eid}",
        bucket=bucket,
        label=bucket == "positive",
        difficulty=difficulty_of(factors),
        event_type=etype,
        actor=actor,
        group=etype,
        payload=payload,
    )


def _gate_order(g: str) -> int:
    return ("horizon", "subsystem", "actor").index(g)
