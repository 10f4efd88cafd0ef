"""All SQL the tool runtime runs: per-episode gate facts, BM25 search, fetch, context window.

The visibility cone is defined once in :mod:`groundeval.store.cone`. Evaluating its
batch query costs milliseconds per call, so an episode computes the few facts the
cone depends on for its fixed (actor, as-of) once — roles held, subsystems granted,
artifacts made visible by broadcasts, restricted artifacts that name the actor or a
role — and every call then decides its gates from those facts (in Python for a
fetch, as SQL parameters for a search). A property test proves the two agree.

Nothing an agent sends is ever part of the SQL text: queries are fixed strings,
chosen among a few fixed variants by the episode's structure, with parameters only.
"""

from __future__ import annotations

import json
import threading
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .cone import GATES, granted_subsystems, roles_at

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def epoch_us(t: datetime) -> int:
    """Microseconds since the epoch (naive times are UTC), exact integer arithmetic."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    d = t - _EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def utc_text(t: datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat()


@dataclass(frozen=True)
class Scope:
    """The cone's inputs for one (actor, as-of), plus which gates the episode enforces."""

    actor: str | None
    as_of: datetime
    as_of_us: int
    gates: tuple[str, ...]
    roles: tuple[str, ...]
    granted: frozenset[str]
    broadcast_ids: frozenset[str]
    allowed_restricted: frozenset[str]
    # sorted copies for SQL parameters (lists keep parameter order deterministic)
    granted_list: list[str] = field(default_factory=list)
    broadcast_list: list[str] = field(default_factory=list)
    allowed_list: list[str] = field(default_factory=list)

    def broken(self, artifact_id: str, subsystem: str, created_us: int | None, restricted: bool,
               gates: tuple[str, ...] | None = None) -> list[str]:
        """Gates (in canonical order) that the artifact breaks; only ``gates`` are checked."""
        wanted = self.gates if gates is None else gates
        out = []
        for g in GATES:
            if g not in wanted:
                continue
            if g == "horizon":
                ok = created_us is not None and created_us <= self.as_of_us
            elif g == "subsystem":
                ok = subsystem in self.granted or artifact_id in self.broadcast_ids
            else:
                ok = not restricted or artifact_id in self.allowed_restricted
            if not ok:
                out.append(g)
        return out


def scope_facts(store, actor: str | None, as_of: datetime, gates) -> Scope:
    """Compute the per-episode facts of the cone (three small queries, once)."""
    t = utc_text(as_of)
    roles = roles_at(store, actor, as_of) if actor else []
    granted = granted_subsystems(store, actor, as_of) if actor else []
    broadcast = [r[0] for r in store.query(
        """SELECT DISTINCT ea.artifact_id
           FROM broadcasts b JOIN events e ON e.type = b.event_type
           JOIN event_artifacts ea ON ea.event_id = e.id
           WHERE list_contains(?::VARCHAR[], b.role) AND e.ts <= ?::TIMESTAMPTZ
           ORDER BY 1""", [roles, t])] if roles else []
    allowed = [r[0] for r in store.query(
        """SELECT DISTINCT artifact_id FROM artifact_visibility
           WHERE (kind = 'actor' AND principal = ?) OR (kind = 'role' AND list_contains(?::VARCHAR[], principal))
           ORDER BY 1""", [actor, roles])] if actor else []
    wanted = tuple(g for g in GATES if g in set(gates))
    return Scope(actor=actor, as_of=as_of, as_of_us=epoch_us(as_of), gates=wanted, roles=tuple(roles),
                 granted=frozenset(granted), broadcast_ids=frozenset(broadcast),
                 allowed_restricted=frozenset(allowed), granted_list=granted, broadcast_list=broadcast,
                 allowed_list=allowed)


def known_subsystems(store) -> frozenset[str]:
    return frozenset(r[0] for r in store.query(
        "SELECT subsystem FROM artifacts UNION SELECT subsystem FROM grants ORDER BY 1"))


# ---------------------------------------------------------------------------- fetch index


@dataclass(frozen=True)
class ArtifactMeta:
    subsystem: str
    created_us: int | None
    restricted: bool
    events: tuple[tuple[int, str, str, tuple[str, ...]], ...]  # (ts_us, event id, type, actors), by time


class FetchIndex:
    """Gate-relevant metadata and referencing events of every artifact, loaded once per store.

    A fetch then needs one dictionary lookup to decide its gates and one point query
    for the body (only when the fetch is allowed): DuckDB's per-query overhead, not
    the data, dominates a single-row lookup.
    """

    def __init__(self, store):
        meta_rows = store.query("SELECT id, subsystem, epoch_us(created), coalesce(restricted, false)"
                                " FROM artifacts ORDER BY id")
        ev_rows = store.query(
            """SELECT DISTINCT ea.artifact_id, epoch_us(e.ts) AS t, e.id,  e.type,
                      coalesce(json_extract_string(e.raw, '$.actors[*]'), []) AS actors
               FROM event_artifacts ea JOIN events e ON e.id = ea.event_id
               ORDER BY ea.artifact_id, t, e.id""")
        events: dict[str, list] = {}
        for aid, t, eid, etype, actors in ev_rows:
            events.setdefault(aid, []).append((t, eid, etype, tuple(actors)))
        self.meta: dict[str, ArtifactMeta] = {
            aid: ArtifactMeta(sub, created, bool(restricted), tuple(events.get(aid, ())))
            for aid, sub, created, restricted in meta_rows
        }


_INDEXES: "weakref.WeakKeyDictionary[Any, FetchIndex]" = weakref.WeakKeyDictionary()
_INDEX_LOCK = threading.Lock()


def fetch_index(store) -> FetchIndex:
    """The store's :class:`FetchIndex`, built on first use (thread-safe)."""
    idx = _INDEXES.get(store)
    if idx is None:
        with _INDEX_LOCK:
            idx = _INDEXES.get(store)
            if idx is None:
                idx = _INDEXES[store] = FetchIndex(store)
    return idx


def artifact_raw(store, artifact_id: str) -> dict[str, Any] | None:
    row = store.query("SELECT raw::VARCHAR FROM artifacts WHERE id = ?", [artifact_id])
    return json.loads(row[0][0]) if row else None


# ---------------------------------------------------------------------------- gate filters


def _gate_filter(scope: Scope, params: list[Any], *, horizon: bool) -> list[str]:
    """WHERE fragments (over alias ``a`` = artifacts) enforcing the scope's gates in SQL.

    Fragments are fixed text; the facts go in as parameters."""
    parts = []
    if horizon or "horizon" in scope.gates:
        parts.append("a.created <= ?::TIMESTAMPTZ")
        params.append(utc_text(scope.as_of))
    if "subsystem" in scope.gates:
        if scope.broadcast_list:
            parts.append("(list_contains(?::VARCHAR[], a.subsystem)"
                         " OR a.id IN (SELECT unnest(?::VARCHAR[])))")
            params += [scope.granted_list, scope.broadcast_list]
        else:
            parts.append("list_contains(?::VARCHAR[], a.subsystem)")
            params.append(scope.granted_list)
    if "actor" in scope.gates:
        if scope.allowed_list:
            parts.append("(NOT coalesce(a.restricted, false) OR list_contains(?::VARCHAR[], a.id))")
            params.append(scope.allowed_list)
        else:
            parts.append("NOT coalesce(a.restricted, false)")
    return parts


# ---------------------------------------------------------------------------- search


def search_rows(store, scope: Scope, query: str, subsystem: str | None, limit: int) -> list[tuple]:
    """BM25-ranked artifacts inside the scope's gates: ``(id, subsystem, created_us, title,
    actors, body_head)``, best first, ties by id. The query text is a parameter."""
    store.ensure_fts()
    params: list[Any] = [query]
    where = ["h.score IS NOT NULL"]
    if subsystem is not None:
        where.append("a.subsystem = ?")
        params.append(subsystem)
    where += _gate_filter(scope, params, horizon=False)
    params.append(limit)
    sql = f"""
        SELECT a.id, a.subsystem, epoch_us(a.created), a.title, a.actors, left(t.body, 600)
        FROM (SELECT id, fts_main_artifact_text.match_bm25(id, ?) AS score FROM artifact_text) h
        JOIN artifacts a ON a.id = h.id JOIN artifact_text t ON t.id = h.id
        WHERE {' AND '.join(where)}
        ORDER BY h.score DESC, a.id
        LIMIT ?"""
    return store.query(sql, params)


# ---------------------------------------------------------------------------- context window


def context_rows(store, scope: Scope, subsystems: list[str] | None, budget_chars: int) -> list[tuple]:
    """The context window: artifacts inside the gates and the horizon (optionally only of
    ``subsystems``), newest first, the longest prefix whose raw records fit ``budget_chars``.
    Rows are ``(id, raw json text)``."""
    params: list[Any] = []
    where = _gate_filter(scope, params, horizon=True)
    if subsystems:
        where.append("list_contains(?::VARCHAR[], a.subsystem)")
        params.append(sorted(subsystems))
    params.append(budget_chars)
    sql = f"""
        SELECT id, raw_text FROM (
            SELECT a.id, a.created, a.raw::VARCHAR AS raw_text,
                   sum(length(a.raw::VARCHAR)) OVER (ORDER BY a.created DESC, a.id
                                                    ROWS UNBOUNDED PRECEDING) AS used
            FROM artifacts a WHERE {' AND '.join(where) or 'true'}
        ) WHERE used <= ?
        ORDER BY created DESC, id"""
    return store.query(sql, params)
