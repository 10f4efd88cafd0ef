"""All SQL of the contract verifier: reference and semantic checks, run on the store it
loaded (``store/lenient.py``) or was given.

Every function takes a loaded :class:`~groundeval.store.store.Store`, binds all
user-supplied values as parameters and returns rows in a fixed order.
"""

from __future__ import annotations

import json
from typing import Any

from groundeval.contract.paths import json_paths
from groundeval.store.witness import witness_sql

_FIRST = (
    "first(e.src_file ORDER BY e.src_file, e.src_line) AS file, "
    "first(e.src_line ORDER BY e.src_file, e.src_line) AS line, "
    "first(e.id ORDER BY e.src_file, e.src_line) AS event_id"
)


def undeclared_actors(store) -> list[tuple]:
    """(actor, events, file, line, event_id) for actors in events that the policy does not declare."""
    return store.query(f"""
        SELECT ea.actor, count(*) AS n, {_FIRST}
        FROM event_actors ea JOIN events e ON e.id = ea.event_id
        WHERE ea.actor NOT IN (SELECT actor FROM actors)
        GROUP BY ea.actor ORDER BY ea.actor""")


def missing_artifacts(store) -> list[tuple]:
    """(artifact_id, references, file, line, event_id) for ids events cite that the corpus lacks."""
    return store.query(f"""
        SELECT ea.artifact_id, count(*) AS n, {_FIRST}
        FROM event_artifacts ea JOIN events e ON e.id = ea.event_id
        WHERE ea.artifact_id NOT IN (SELECT id FROM artifacts)
        GROUP BY ea.artifact_id ORDER BY ea.artifact_id""")


def missing_artifacts_by_key(store) -> list[tuple]:
    """(artifact_ids key, whether the key is a corpus subsystem, distinct missing ids, references,
    first missing id, file, line, event_id) per key whose values name artifacts the corpus lacks."""
    return store.query(f"""
        SELECT ea.key, ea.key IN (SELECT DISTINCT subsystem FROM artifacts) AS is_subsystem,
               count(DISTINCT ea.artifact_id) AS ids, count(*) AS n, min(ea.artifact_id) AS example, {_FIRST}
        FROM event_artifacts ea JOIN events e ON e.id = ea.event_id
        WHERE ea.artifact_id NOT IN (SELECT id FROM artifacts)
        GROUP BY ea.key ORDER BY ea.key""")


def undated_artifacts(store) -> list[tuple]:
    """(id, file, line) of artifacts without a creation time."""
    return store.query("SELECT id, src_file, src_line FROM artifacts WHERE created IS NULL ORDER BY id")


def event_type_counts(store) -> dict[str, int]:
    return dict(store.query("SELECT type, count(*) FROM events GROUP BY type ORDER BY type"))


def corpus_subsystems(store) -> dict[str, int]:
    return dict(store.query("SELECT subsystem, count(*) FROM artifacts GROUP BY subsystem ORDER BY subsystem"))


def inline_visibility_roles(store) -> list[tuple]:
    """(artifact_id, role, file, line) for roles named in artifacts' own ``visibility`` field."""
    return store.query("""
        SELECT v.artifact_id, v.principal, a.src_file, a.src_line
        FROM artifact_visibility v JOIN artifacts a ON a.id = v.artifact_id
        WHERE v.kind = 'role' AND a.restricted_inline ORDER BY v.artifact_id, v.principal""")


def inline_visibility_actors(store) -> list[tuple]:
    """(artifact_id, actor, file, line) for actors named in artifacts' own ``visibility`` field."""
    return store.query("""
        SELECT v.artifact_id, v.principal, a.src_file, a.src_line
        FROM artifact_visibility v JOIN artifacts a ON a.id = v.artifact_id
        WHERE v.kind = 'actor' AND a.restricted_inline ORDER BY v.artifact_id, v.principal""")


def _resolved(col: str = "raw") -> str:
    """Predicate: dotted path (bound as a list of DuckDB JSON paths) resolves to a usable value."""
    return (
        f"list_bool_or(list_transform(?::VARCHAR[], p -> coalesce(json_type({col}, p) NOT IN ('NULL')"
        f" AND NOT (json_type({col}, p) = 'ARRAY' AND json_array_length({col}, p) = 0), false)))"
    )


def path_coverage(store, event_type: str, path: str) -> tuple[int, int]:
    """(events of ``event_type``, of which ``path`` resolves to a non-null, non-empty value)."""
    row = store.query(
        f"SELECT count(*), count(*) FILTER (WHERE {_resolved()}) FROM events WHERE type = ?",
        [json_paths(path), event_type],
    )
    return row[0][0], row[0][1]


def path_coverages(store, pairs: list[tuple[str, list[str]]]) -> list[tuple[int, int]]:
    """:func:`path_coverage` of every ``(event type, DuckDB JSON paths)`` pair, in one pass over
    the events (a query per pair scanned the events once each); ``(0, 0)`` for a type with no events."""
    if not pairs:
        return []
    rows = store.query(
        f"""WITH specs AS (SELECT unnest(range(len(?::VARCHAR[]))) AS i, unnest(?::VARCHAR[]) AS etype,
                                 unnest(?::VARCHAR[][]) AS paths)
            SELECT s.i, count(*), count(*) FILTER (WHERE {_resolved().replace("?::VARCHAR[]", "s.paths")})
            FROM specs s JOIN events e ON e.type = s.etype GROUP BY s.i""",
        [[t for t, _ in pairs], [t for t, _ in pairs], [p for _, p in pairs]],
    )
    out = [(0, 0)] * len(pairs)
    for i, total, hits in rows:
        out[i] = (total, hits)
    return out


def events_of_type(store, event_type: str) -> list[tuple[str, int, str, str, int | None]]:
    """(id, epoch_us, raw JSON text, file, line) of every event of a type, by time then id."""
    return store.query(
        "SELECT id, epoch_us(ts), raw::VARCHAR, src_file, src_line FROM events WHERE type = ? ORDER BY ts, id",
        [event_type],
    )


def log_span(store) -> tuple[int | None, int | None]:
    row = store.query("SELECT epoch_us(min(ts)), epoch_us(max(ts)) FROM events")[0]
    return row[0], row[1]


def windows_outside_log(store) -> list[tuple]:
    """(kind, owner, name, empty) for role and grant windows that miss the log's span entirely
    (``empty`` when since >= until, which covers no time at all)."""
    return store.query("""
        WITH span AS (SELECT min(ts) AS lo, max(ts) AS hi FROM events)
        SELECT 'role' AS kind, actor AS owner, role AS name, since >= until AS empty
        FROM actor_roles, span WHERE since >= until OR until <= span.lo OR since > span.hi
        UNION ALL
        SELECT 'grant', role, subsystem, since >= until
        FROM grants, span WHERE since >= until OR until <= span.lo OR since > span.hi
        ORDER BY 1, 2, 3""")


def never_visible_artifacts(store) -> list[tuple]:
    """(id, subsystem, file, line) of artifacts that no actor could see at any time.

    Seeing x needs one moment t >= created(x) when some actor holds a role r and r is
    granted x's subsystem (or has been told of x by a broadcast event at or before t),
    and x is unrestricted or lists that actor or r — the visibility cone, asked for
    "ever" instead of one (actor, time).

    For an unrestricted x the actor does not matter, and greatest(a, b, c) < least(d, e)
    holds iff every one of a, b, c is below both d and e: x is seen through a grant iff
    created(x) is before the latest end of any non-empty (role window ∩ grant window) on
    its subsystem, and through a broadcast iff max(event time, created(x)) is before the
    latest end of any non-empty role window receiving that event type. Those ends are a
    few rows per subsystem or event type, so unrestricted artifacts cost one join each;
    only restricted ones are joined to every (actor, role) — the full product was
    artifacts x actors rows (≈ 7 GB at a million artifacts).
    """
    return store.query("""
        WITH grant_end AS (
            SELECT g.subsystem, max(least(ar.until, g.until)) AS hi
            FROM grants g JOIN actor_roles ar ON ar.role = g.role
            WHERE greatest(ar.since, g.since) < least(ar.until, g.until)
            GROUP BY g.subsystem
        ), broadcast_end AS (
            SELECT b.event_type, max(ar.until) AS hi
            FROM broadcasts b JOIN actor_roles ar ON ar.role = b.role
            WHERE ar.since < ar.until
            GROUP BY b.event_type
        ), open_seen AS (
            SELECT x.id FROM artifacts x JOIN grant_end ge ON ge.subsystem = x.subsystem
            WHERE NOT x.restricted AND x.created IS NOT NULL AND x.created < ge.hi
            UNION
            SELECT x.id FROM artifacts x JOIN event_artifacts ea ON ea.artifact_id = x.id
            JOIN events e ON e.id = ea.event_id
            JOIN broadcast_end be ON be.event_type = e.type
            WHERE NOT x.restricted AND x.created IS NOT NULL AND greatest(e.ts, x.created) < be.hi
        ), access AS (
            SELECT ar.actor, ar.role, x.id,
                   greatest(ar.since, g.since, x.created) AS lo, least(ar.until, g.until) AS hi
            FROM artifacts x JOIN grants g ON g.subsystem = x.subsystem
            JOIN actor_roles ar ON ar.role = g.role
            WHERE x.restricted AND x.created IS NOT NULL
            UNION ALL
            SELECT ar.actor, ar.role, x.id, greatest(ar.since, e.ts, x.created) AS lo, ar.until AS hi
            FROM artifacts x JOIN event_artifacts ea ON ea.artifact_id = x.id
            JOIN events e ON e.id = ea.event_id
            JOIN broadcasts b ON b.event_type = e.type
            JOIN actor_roles ar ON ar.role = b.role
            WHERE x.restricted AND x.created IS NOT NULL
        ), seen AS (
            SELECT id FROM open_seen
            UNION
            SELECT DISTINCT a.id FROM access a
            WHERE a.lo < a.hi AND EXISTS (
                SELECT 1 FROM artifact_visibility v WHERE v.artifact_id = a.id
                AND ((v.kind = 'actor' AND v.principal = a.actor) OR (v.kind = 'role' AND v.principal = a.role)))
        )
        SELECT x.id, x.subsystem, x.src_file, x.src_line FROM artifacts x
        WHERE x.created IS NOT NULL AND x.id NOT IN (SELECT id FROM seen) ORDER BY x.id""")


def perspective_candidates(store, actors: list[str], pivots: int) -> dict[str, int]:
    """How many (actor, as-of, artifact) cases each Perspective bucket could draw on.

    As-of times are the times of up to ``pivots`` events each actor took part in
    (spread over their history); per case the cone decides the bucket:
    positive = all gates pass, temporal = only the horizon fails,
    permission = created in time but the subsystem or actor gate fails.

    The gates of :func:`~groundeval.store.cone.gate_sql`, resolved once per pivot
    (roles held, subsystems granted, artifacts broadcast or listed to it). The pivots
    times the corpus make ~1M cases at 22.5K events and ~700M at 1M, so the cases are
    counted, never listed: per pivot, the artifacts in its horizon (a running count
    over creation times), the open artifacts of its granted subsystems (a running
    count per subsystem) and the few artifacts listed or broadcast to it one by one.
    """
    if not actors:
        return {"positive": 0, "negative_permission": 0, "negative_temporal": 0}
    rows = store.query(
        """
        WITH mine AS (
            SELECT DISTINCT ea.actor, e.ts FROM event_actors ea JOIN events e ON e.id = ea.event_id
            WHERE ea.actor IN (SELECT unnest(?::VARCHAR[]))
        ), ranked AS (
            SELECT actor, ts, ntile(?) OVER (PARTITION BY actor ORDER BY ts) AS tile FROM mine
        ), p AS (
            SELECT row_number() OVER (ORDER BY actor, as_of) AS pid, actor, as_of
            FROM (SELECT DISTINCT actor, min(ts) AS as_of FROM ranked GROUP BY actor, tile)
        ), pr AS (
            SELECT DISTINCT p.pid, ar.role FROM p
            JOIN actor_roles ar ON ar.actor = p.actor AND ar.since <= p.as_of AND p.as_of < ar.until
        ), psub AS (
            SELECT DISTINCT pr.pid, g.subsystem FROM pr JOIN p ON p.pid = pr.pid
            JOIN grants g ON g.role = pr.role AND g.since <= p.as_of AND p.as_of < g.until
        ), pbc AS (
            SELECT DISTINCT pr.pid, ea.artifact_id FROM pr JOIN p ON p.pid = pr.pid
            JOIN broadcasts b ON b.role = pr.role
            JOIN events e ON e.type = b.event_type AND e.ts <= p.as_of
            JOIN event_artifacts ea ON ea.event_id = e.id
        ), pvis AS (
            SELECT p.pid, v.artifact_id FROM p
            JOIN artifact_visibility v ON v.kind = 'actor' AND v.principal = p.actor
            UNION
            SELECT pr.pid, v.artifact_id FROM pr
            JOIN artifact_visibility v ON v.kind = 'role' AND v.principal = pr.role
        ), x AS (
            SELECT id, subsystem, created, coalesce(NOT restricted, false) AS open
            FROM artifacts WHERE created IS NOT NULL
        ), upto AS (  -- artifacts created at or before each time (ties counted together)
            SELECT created, sum(count(*)) OVER (ORDER BY created) AS n FROM x GROUP BY created
        ), open_upto AS (
            SELECT subsystem, created, sum(count(*)) OVER (PARTITION BY subsystem ORDER BY created) AS n
            FROM x WHERE open GROUP BY subsystem, created
        ), open_all AS (
            SELECT subsystem, count(*) AS n FROM x WHERE open GROUP BY subsystem
        ), horizon AS (  -- per pivot: cases whose horizon gate passes
            SELECT p.pid, coalesce(u.n, 0) AS n FROM p ASOF LEFT JOIN upto u ON p.as_of >= u.created
        ), granted AS (  -- open artifacts of a granted subsystem: (in horizon, all)
            SELECT q.pid, coalesce(u.n, 0) AS pos, coalesce(a.n, 0) AS sa
            FROM (SELECT s.pid, s.subsystem, p.as_of FROM psub s JOIN p ON p.pid = s.pid) q
            ASOF LEFT JOIN open_upto u ON u.subsystem = q.subsystem AND q.as_of >= u.created
            LEFT JOIN open_all a ON a.subsystem = q.subsystem
        ), listed AS (  -- restricted artifacts listed to the pivot, of a granted subsystem or broadcast
            SELECT v.pid, (x.created <= p.as_of)::INTEGER AS pos, 1 AS sa
            FROM pvis v JOIN x ON x.id = v.artifact_id AND NOT x.open JOIN p ON p.pid = v.pid
            LEFT JOIN psub s ON s.pid = v.pid AND s.subsystem = x.subsystem
            LEFT JOIN pbc b ON b.pid = v.pid AND b.artifact_id = x.id
            WHERE s.pid IS NOT NULL OR b.pid IS NOT NULL
        ), broadcast AS (  -- open artifacts broadcast to the pivot outside its granted subsystems
            SELECT b.pid, (x.created <= p.as_of)::INTEGER AS pos, 1 AS sa
            FROM pbc b JOIN x ON x.id = b.artifact_id AND x.open JOIN p ON p.pid = b.pid
            LEFT JOIN psub s ON s.pid = b.pid AND s.subsystem = x.subsystem
            WHERE s.pid IS NULL
        ), gates AS (
            SELECT pos, sa FROM granted UNION ALL SELECT pos, sa FROM listed UNION ALL SELECT pos, sa FROM broadcast
        )
        SELECT coalesce((SELECT sum(pos) FROM gates), 0)::BIGINT AS pos,
               coalesce((SELECT sum(n) FROM horizon), 0)::BIGINT AS h,
               coalesce((SELECT sum(sa) FROM gates), 0)::BIGINT AS sa""",
        [sorted(actors), max(1, int(pivots))],
    )
    # positive: every gate passes; permission: the horizon passes, a subsystem or actor gate
    # fails; temporal: only the horizon fails
    pos, in_horizon, gates_pass = rows[0]
    return {"positive": pos, "negative_permission": in_horizon - pos, "negative_temporal": gates_pass - pos}


def facts(store) -> dict[str, Any]:
    """Counts a drift baseline compares."""
    q = store.query
    return {
        "events": q("SELECT count(*) FROM events")[0][0],
        "artifacts": q("SELECT count(*) FROM artifacts")[0][0],
        "actors": q("SELECT count(*) FROM actors")[0][0],
        "event_types": event_type_counts(store),
        "subsystems": corpus_subsystems(store),
        "grants": sorted(f"{r}:{s}" for r, s in q("SELECT DISTINCT role, subsystem FROM grants ORDER BY 1, 2")),
    }


def event_locations(store, ids: list[str]) -> dict[str, tuple[str, int | None, int]]:
    """id -> (file, line, epoch_us) for the given event ids."""
    rows = store.query(
        "SELECT id, src_file, src_line, epoch_us(ts) FROM events WHERE id IN (SELECT unnest(?::VARCHAR[])) ORDER BY id",
        [sorted(set(ids))],
    )
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def events_with_artifacts(store: Any, ids: list[str]) -> set[str]:
    """Those of the given events that reference an artifact the store holds."""
    rows = store.query(
        """SELECT DISTINCT ea.event_id FROM event_artifacts ea JOIN artifacts x ON x.id = ea.artifact_id
           WHERE ea.event_id IN (SELECT unnest(from_json(?::JSON, '["VARCHAR"]')))""",
        [json.dumps(sorted(set(ids)))],  # one JSON text: a Python list costs the client a lookup per element
    )
    return {r[0] for r in rows}


def known_artifacts(store: Any, ids: list[str]) -> set[str]:
    """Those of the given ids that are artifacts of the store (never every id of the store: 19K
    at 22.5K events took 40 ms to check a handful of restrictions)."""
    rows = store.query(
        """SELECT id FROM artifacts WHERE id IN (SELECT unnest(from_json(?::JSON, '["VARCHAR"]')))""",
        [json.dumps(sorted(set(ids)))],  # one JSON text, as events_with_artifacts
    )
    return {r[0] for r in rows}


def witnessed_counts(store: Any, types: list[str]) -> list[tuple[str, int]]:
    """(event type, events of the type that reference an artifact created at or after them) for ``types``."""
    return store.query(
        f"""
        SELECT e.type, count(*) FILTER (WHERE EXISTS (
                   SELECT 1 FROM event_artifacts ea JOIN artifacts x ON x.id = ea.artifact_id
                   WHERE ea.event_id = e.id AND {witness_sql("x.created", "e.ts")}))
        FROM events e WHERE e.type IN (SELECT unnest(?::VARCHAR[])) GROUP BY e.type ORDER BY e.type""",
        [types],
    )


def unparseable(con: Any, values: list[str]) -> set[str]:
    """The texts DuckDB cannot read as a finite timestamp (``values``: Unicode strings): ``infinity``
    and ``-infinity`` are timestamps to DuckDB but no moment, and the loader refuses them too."""
    test = "WHERE NOT coalesce(isfinite(try_cast(t AS TIMESTAMPTZ)), false)"
    # one JSON text parameter: a Python list costs the DuckDB client a lookup per element
    rows = con.execute(
        f"SELECT t FROM unnest(from_json(?::JSON, '[\"VARCHAR\"]')) AS u(t) {test}", [json.dumps(values)]
    ).fetchall()
    return {r[0] for r in rows}


def graph_facts(cur: Any) -> tuple[set[str], set[str], list[tuple], list[tuple]]:
    """What level 3 reads of the graph, from the tables ``graph.build.sampled_graph`` left on
    ``cur`` (``ge_e``: named causal edges, ``ge_sc``: each trigger's status; see
    ``graph/sql.py``): the causal spec names with an edge, the silence keys with a trigger,
    every absence (key, trigger, µs) and every ambiguous trigger (key, trigger, reason,
    other event), sorted."""
    linked = {r[0] for r in cur.execute("SELECT DISTINCT name FROM ge_e").fetchall()}
    triggered = {r[0] for r in cur.execute("SELECT DISTINCT key FROM ge_sc").fetchall()}
    absences = cur.execute("SELECT key, tid, tts FROM ge_sc WHERE status = 'absence' ORDER BY key, tid").fetchall()
    ambiguous = cur.execute(
        "SELECT key, tid, status, other FROM ge_sc WHERE status NOT IN ('presence', 'absence') ORDER BY ALL"
    ).fetchall()
    return linked, triggered, absences, ambiguous
