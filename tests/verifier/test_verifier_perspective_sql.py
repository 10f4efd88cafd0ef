"""The set-based Perspective bucket counts (GE305) agree with the cone's per-case gate SQL."""

from __future__ import annotations

import pytest
from groundeval.verifier import sql as verify_sql
from verifier_drafts import TINY, PackDraft

from groundeval.store.cone import gate_sql
from groundeval.store.store import Store


def reference(store, actors, pivots):
    """Every (actor, pivot, artifact) case through ``cone.gate_sql``, counted per bucket."""
    pairs = """(
        WITH mine AS (SELECT DISTINCT ea.actor, e.ts FROM event_actors ea JOIN events e ON e.id = ea.event_id
                      WHERE ea.actor IN (SELECT unnest(?::VARCHAR[]))),
             ranked AS (SELECT actor, ts, ntile(?) OVER (PARTITION BY actor ORDER BY ts) AS tile FROM mine),
             piv AS (SELECT actor, min(ts) AS as_of FROM ranked GROUP BY actor, tile)
        SELECT piv.actor || chr(31) || epoch_us(piv.as_of)::VARCHAR AS key, piv.actor, piv.as_of,
               x.id AS artifact_id FROM piv CROSS JOIN artifacts x WHERE x.created IS NOT NULL)"""
    rows = store.query(f"SELECT horizon_ok, subsystem_ok, actor_ok FROM ({gate_sql(pairs)})", [sorted(actors), pivots])
    return {
        "positive": sum(1 for h, s, a in rows if h and s and a),
        "negative_permission": sum(1 for h, s, a in rows if h and not (s and a)),
        "negative_temporal": sum(1 for h, s, a in rows if not h and s and a),
    }


def _role_restriction(d):
    d.manifest["access"]["restrictions"]["JIRA-43"] = {"roles": ["manager"]}


def _grant_window(d):
    d.manifest["access"]["roles"]["engineer"]["subsystems"] = [
        "slack",
        "jira",
        {"name": "confluence", "since": "2026-03-04T00:00:00Z"},
    ]


def _broadcast_to_engineers(d):
    d.manifest["access"]["roles"]["engineer"]["broadcast_event_types"] = ["customer_escalation"]


VARIANTS = {
    "as_bundled": lambda d: None,
    "role_restriction": _role_restriction,
    "grant_window": _grant_window,
    "broadcast": _broadcast_to_engineers,
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_bucket_counts_match_the_cone(name, tmp_path):
    d = PackDraft(TINY)
    VARIANTS[name](d)
    store = Store.open(d.write(tmp_path / name))
    try:
        actors = ["alice", "bob", "carol", "dave"]
        for pivots in (1, 2, 5):
            want = reference(store, actors, pivots)
            assert verify_sql.perspective_candidates(store, actors, pivots) == want
        assert sum(want.values()) > 0
    finally:
        store.close()
