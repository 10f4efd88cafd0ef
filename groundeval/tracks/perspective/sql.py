"""Perspective's SQL: its actors, pivots and targets, their roles and grants, and the cone
for batches of (actor, as-of, artifact).

Every query runs on the generator's :class:`~groundeval.graph.sql.GraphSQL` cursor and
ends in ``ORDER BY``; working sets go to ``ge_*`` temp tables.
"""

from __future__ import annotations

from ...graph.sql import GraphSQL
from ...store.cone import gate_sql
from ...store.witness import witness_sql

NEAREST = 3  # per pivot and event type, the witnessed events taken on each side of as-of


def _targets_sql(witnessed: str) -> str:
    return f"""
        WITH w AS (SELECT e.id, e.type, e.ts, row_number() OVER (PARTITION BY e.type ORDER BY e.ts, e.id) AS k
                   FROM events e WHERE EXISTS (
                       SELECT 1 FROM event_artifacts ea JOIN artifacts x ON x.id = ea.artifact_id
                       WHERE ea.event_id = e.id AND {witnessed})),
             wt AS (SELECT type, ts, min(k) AS kmin, max(k) AS kmax FROM w GROUP BY type, ts),
             pt AS (SELECT pv.actor, pv.as_of, ty.type FROM ge_pv pv, (SELECT DISTINCT type FROM w) ty),
             back AS (SELECT pt.actor, pt.as_of, pt.type, f.kmax AS k FROM pt ASOF JOIN wt f
                      ON pt.type = f.type AND f.ts <= pt.as_of),
             fwd AS (SELECT pt.actor, pt.as_of, pt.type, f.kmin AS k FROM pt ASOF JOIN wt f
                     ON pt.type = f.type AND f.ts > pt.as_of)
        -- the ranks each side takes, listed (an equality join, not a range over a whole type)
        SELECT DISTINCT b.actor, epoch_us(b.as_of), w.id
          FROM (SELECT actor, as_of, type, unnest(range(k - ({NEAREST} - 1), k + 1)) AS k FROM back) b
          JOIN w ON w.type = b.type AND w.k = b.k
        UNION
        SELECT f.actor, epoch_us(f.as_of), w.id
          FROM (SELECT actor, as_of, type, unnest(range(k, k + {NEAREST})) AS k FROM fwd) f
          JOIN w ON w.type = f.type AND w.k = f.k
        ORDER BY 1, 2, 3"""


def perspective_targets(gs: GraphSQL, pivots: list[tuple[str, int]]) -> list[tuple[str, int, str]]:
    """(actor, as_of_us, event id): per pivot and type, the nearest witnessed events each side."""
    if not pivots:
        return []
    gs.put("ge_pv0", [("actor", "VARCHAR"), ("us", "BIGINT")], pivots)
    gs.q("CREATE OR REPLACE TEMP TABLE ge_pv AS SELECT actor, ge_ts(us) AS as_of FROM ge_pv0")
    return gs.q(_targets_sql(witness_sql("x.created", "e.ts")))


def perspective_actors(gs: GraphSQL, configured: list[str], limit: int) -> list[str]:
    """Configured actors that hold some role, else the most active non-system ones."""
    if configured:
        gs.put("ge_ids", [("id", "VARCHAR")], ([a] for a in configured))
        rows = gs.q("SELECT DISTINCT actor FROM actor_roles WHERE actor IN (SELECT id FROM ge_ids) ORDER BY actor")
        return [r[0] for r in rows]
    rows = gs.q(
        """SELECT ea.actor FROM event_actors ea JOIN actors a ON a.actor = ea.actor AND NOT a.system
           WHERE EXISTS (SELECT 1 FROM actor_roles r WHERE r.actor = ea.actor)
           GROUP BY ea.actor ORDER BY count(*) DESC, ea.actor LIMIT ?""",
        [limit],
    )
    return [r[0] for r in rows]


def perspective_pivots(gs: GraphSQL, actors: list[str], per_actor: int) -> list[tuple[str, int]]:
    """(actor, as_of_us): quantiles of each actor's own event times (of the whole log
    when the actor took part in nothing)."""
    gs.put("ge_ids", [("id", "VARCHAR")], ([a] for a in actors))
    return gs.q(
        """WITH a AS (SELECT id AS actor FROM ge_ids),
                own AS (SELECT ea.actor, e.ts FROM event_actors ea JOIN events e ON e.id = ea.event_id
                        WHERE ea.actor IN (SELECT actor FROM a)),
                lone AS (SELECT a.actor, e.ts FROM a, events e
                         WHERE a.actor NOT IN (SELECT actor FROM own)),
                t AS (SELECT actor, ts, row_number() OVER (PARTITION BY actor ORDER BY ts) AS rn,
                             count(*) OVER (PARTITION BY actor) AS n
                      FROM (SELECT * FROM own UNION ALL SELECT * FROM lone))
           SELECT DISTINCT actor, epoch_us(ts) FROM t
           WHERE list_contains(list_transform(range(1, ? + 1),
                               i -> greatest(1, ceil(i * n / (? + 1)))::BIGINT), rn)
           ORDER BY 1, 2""",
        [per_actor, per_actor],
    )


def gate_batch(gs: GraphSQL, rows: list[tuple[str, str, int, str]]) -> list[tuple]:
    """The cone (``cone.gate_sql``) for many ``(key, actor, as_of_us, artifact_id)`` rows."""
    if not rows:
        return []
    gs.put("ge_pairs0", [("key", "VARCHAR"), ("actor", "VARCHAR"), ("us", "BIGINT"), ("artifact_id", "VARCHAR")], rows)
    gs.cur.execute(
        "CREATE OR REPLACE TEMP TABLE ge_pairs AS SELECT key, actor, ge_ts(us) AS as_of, artifact_id FROM ge_pairs0"
    )
    return gs.q(gate_sql("ge_pairs"))


_ACTOR_SETS = {
    # what: (the listed column, the extra join that reaches it)
    "roles": ("ar.role", ""),
    "grants": (
        "g.subsystem",
        "JOIN grants g ON g.role = ar.role AND g.since <= ge_ts(pv.us) AND ge_ts(pv.us) < g.until",
    ),
}


def actor_sets(gs: GraphSQL, pivots: list[tuple[str, int]], what: str) -> dict[tuple[str, int], list[str]]:
    """Per (actor, as_of_us): the roles the actor holds then (``what='roles'``), or the
    subsystems those roles are granted then (``what='grants'``), sorted."""
    if not pivots:
        return {}
    column, join = _ACTOR_SETS[what]
    gs.put("ge_pv0", [("actor", "VARCHAR"), ("us", "BIGINT")], pivots)
    rows = gs.q(
        f"""WITH pv AS (SELECT actor, us FROM ge_pv0)
            SELECT pv.actor, pv.us, list(DISTINCT {column} ORDER BY {column})
            FROM pv JOIN actor_roles ar ON ar.actor = pv.actor
              AND ar.since <= ge_ts(pv.us) AND ge_ts(pv.us) < ar.until
            {join}
            GROUP BY pv.actor, pv.us ORDER BY 1, 2"""
    )
    return {(r[0], r[1]): list(r[2]) for r in rows}
