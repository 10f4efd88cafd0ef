"""The visibility cone V(a, t) in SQL — one definition for generator, runtime, scorer and verifier.

Artifact x is visible to actor a at time t iff
1. ``created(x) <= t`` (else a *horizon* violation; no creation time is never visible);
2. x's subsystem is granted to a role a holds at t, or x is referenced at or before t
   by an event whose type such a role receives as broadcast (else *subsystem*);
3. x is unrestricted, or its restriction lists a or a role a holds at t (else *actor*).

Roles and grants are windows ``since <= t < until``. Taking part in an event grants
nothing. :func:`gate_sql` evaluates the three gates for any relation of
``(key, actor, as_of, artifact_id)`` rows, so one query serves a single fetch and a
whole batch of generated questions alike.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable

GATES = ("horizon", "subsystem", "actor")


def gate_sql(pairs: str) -> str:
    """SQL over ``pairs`` (a table name or a parenthesised subquery with columns
    ``key, actor, as_of, artifact_id``) returning
    ``key, artifact_id, found, subsystem, horizon_ok, subsystem_ok, actor_ok``.
    Unknown artifact ids come back with ``found = false`` and all gates false."""
    return f"""
    WITH q AS (SELECT DISTINCT key, actor, as_of::TIMESTAMPTZ AS as_of, artifact_id FROM {pairs} AS p),
    qr AS (
        SELECT q.key, q.artifact_id, ar.role
        FROM q JOIN actor_roles ar ON ar.actor = q.actor AND ar.since <= q.as_of AND q.as_of < ar.until
    ),
    sub_ok AS (
        SELECT DISTINCT qr.key, qr.artifact_id
        FROM qr JOIN artifacts x ON x.id = qr.artifact_id
        JOIN q ON q.key = qr.key AND q.artifact_id = qr.artifact_id
        WHERE EXISTS (SELECT 1 FROM grants g WHERE g.role = qr.role AND g.subsystem = x.subsystem
                      AND g.since <= q.as_of AND q.as_of < g.until)
           OR EXISTS (SELECT 1 FROM broadcasts b JOIN events e ON e.type = b.event_type
                      JOIN event_artifacts ea ON ea.event_id = e.id
                      WHERE b.role = qr.role AND ea.artifact_id = x.id AND e.ts <= q.as_of)
    ),
    act_ok AS (
        SELECT DISTINCT q.key, q.artifact_id
        FROM q JOIN artifact_visibility v ON v.artifact_id = q.artifact_id
        WHERE (v.kind = 'actor' AND v.principal = q.actor)
           OR (v.kind = 'role' AND v.principal IN
               (SELECT role FROM qr WHERE qr.key = q.key AND qr.artifact_id = q.artifact_id))
    )
    SELECT q.key, q.artifact_id, x.id IS NOT NULL AS found, x.subsystem,
           coalesce(x.created <= q.as_of, false) AS horizon_ok,
           (s.key IS NOT NULL) AS subsystem_ok,
           coalesce(NOT x.restricted, false) OR (a.key IS NOT NULL) AS actor_ok
    FROM q LEFT JOIN artifacts x ON x.id = q.artifact_id
    LEFT JOIN sub_ok s ON s.key = q.key AND s.artifact_id = q.artifact_id
    LEFT JOIN act_ok a ON a.key = q.key AND a.artifact_id = q.artifact_id
    ORDER BY q.key, q.artifact_id
    """


def utc_text(t: datetime) -> str:
    """A time as a UTC ISO string for a SQL parameter (naive times are UTC)."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat()


def gate_flags(
    store, actor: str | None, as_of: datetime, artifact_ids: Iterable[str], gates: Iterable[str] = GATES
) -> dict[str, list[str] | None]:
    """Flags per artifact id for one (actor, as_of): ``[]`` = inside the gates,
    ``None`` = no such artifact. Only the requested ``gates`` are checked."""
    ids = sorted(set(artifact_ids))
    if not ids:
        return {}
    wanted = [g for g in GATES if g in set(gates)]
    pairs = "(SELECT 'k' AS key, ?::VARCHAR AS actor, ?::TIMESTAMPTZ AS as_of, unnest(?::VARCHAR[]) AS artifact_id)"
    rows = store.query(gate_sql(pairs), [actor or "", utc_text(as_of), ids])
    out: dict[str, list[str] | None] = {}
    for _key, aid, found, _sub, h_ok, s_ok, a_ok in rows:
        if not found:
            out[aid] = None
            continue
        ok = {"horizon": h_ok, "subsystem": s_ok, "actor": a_ok}
        out[aid] = [g for g in wanted if not ok[g]]
    return out


def roles_at(store, actor: str, as_of: datetime) -> list[str]:
    """Roles the actor holds at ``as_of`` (sorted; empty after a departure)."""
    return [
        r[0]
        for r in store.query(
            "SELECT DISTINCT role FROM actor_roles WHERE actor = ? AND since <= ?::TIMESTAMPTZ AND ?::TIMESTAMPTZ < until"
            " ORDER BY role",
            [actor, utc_text(as_of), utc_text(as_of)],
        )
    ]


def known_subsystems(store) -> frozenset[str]:
    """Every subsystem the pack has: its artifacts' and its grants' (a subsystem outside it
    cannot be searched; the runtime refuses it as unknown)."""
    return frozenset(
        r[0] for r in store.query("SELECT subsystem FROM artifacts UNION SELECT subsystem FROM grants ORDER BY 1")
    )


def granted_subsystems(store, actor: str, as_of: datetime) -> list[str]:
    """Subsystems granted to the actor's roles at ``as_of`` (sorted)."""
    t = utc_text(as_of)
    return [
        r[0]
        for r in store.query(
            """SELECT DISTINCT g.subsystem FROM actor_roles ar JOIN grants g ON g.role = ar.role
           WHERE ar.actor = ? AND ar.since <= ?::TIMESTAMPTZ AND ?::TIMESTAMPTZ < ar.until
             AND g.since <= ?::TIMESTAMPTZ AND ?::TIMESTAMPTZ < g.until ORDER BY 1""",
            [actor, t, t, t, t],
        )
    ]
