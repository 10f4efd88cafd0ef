"""The Perspective candidate counts (GE305, ``stats.perspective_candidates``) are counted per
pivot without listing the pivot x corpus cases; they must equal the cases listed one by one
(the reference below: every pivot joined to every artifact, each gate tested per case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval.store.store import Store
from groundeval.verifier import sql

REPO = Path(__file__).resolve().parents[2]


def listed_cases(store, actors: list[str], pivots: int) -> dict[str, int]:
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
        ), cases AS (
            SELECT coalesce(x.created <= p.as_of, false) AS horizon_ok,
                   (s.pid IS NOT NULL OR b.pid IS NOT NULL) AS subsystem_ok,
                   coalesce(NOT x.restricted, false) OR (v.pid IS NOT NULL) AS actor_ok
            FROM p CROSS JOIN artifacts x
            LEFT JOIN psub s ON s.pid = p.pid AND s.subsystem = x.subsystem
            LEFT JOIN pbc b ON b.pid = p.pid AND b.artifact_id = x.id
            LEFT JOIN pvis v ON v.pid = p.pid AND v.artifact_id = x.id
            WHERE x.created IS NOT NULL
        )
        SELECT count(*) FILTER (WHERE horizon_ok AND subsystem_ok AND actor_ok),
               count(*) FILTER (WHERE horizon_ok AND NOT (subsystem_ok AND actor_ok)),
               count(*) FILTER (WHERE NOT horizon_ok AND subsystem_ok AND actor_ok)
        FROM cases""",
        [sorted(actors), max(1, int(pivots))],
    )
    pos, perm, temp = rows[0]
    return {"positive": pos, "negative_permission": perm, "negative_temporal": temp}


@pytest.mark.parametrize("pack", ["tiny", "finance", "healthcare", "cybersecurity", "legal", "enterprise-support"])
def test_counted_cases_equal_the_listed_cases(pack):
    store = Store.open(REPO / "domain_packs" / pack)
    try:
        actors = sorted(r[0] for r in store.query("SELECT actor FROM actors"))
        for subset in (actors, actors[::2], actors[:1], []):
            for pivots in (1, 2, 5, 40):
                want = (
                    listed_cases(store, subset, pivots)
                    if subset
                    else dict.fromkeys(("positive", "negative_permission", "negative_temporal"), 0)
                )
                assert sql.perspective_candidates(store, subset, pivots) == want, (subset, pivots)
    finally:
        store.close()
