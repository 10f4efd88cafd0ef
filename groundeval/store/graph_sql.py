"""All SQL of the event graph and the question generators (set-based, parameterised).

Everything here runs on one cursor and keeps its working sets in ``ge_*`` temp
tables, so a read-only database works too. Join keys follow
:func:`groundeval.contract.paths.join_key` exactly: a dotted path resolves on the
event's raw JSON (first candidate that is present and not null); a list offers
every non-null element, a scalar offers itself; strings compare by their text,
booleans as ``true``/``false``, integers and integral floats by their decimal text
(so ``"42"``, ``42`` and ``42.0`` all join), anything else by its minified JSON.
Every query ends in ``ORDER BY`` so results never depend on file or row order.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..contract.paths import json_paths
from .cone import gate_sql

US_PER_DAY = 86_400_000_000

# One scalar JSON value -> its join-key text (NULL for JSON null).
_NORM_MACRO = """
CREATE OR REPLACE TEMP MACRO ge_norm(x) AS CASE json_type(x)
    WHEN 'NULL' THEN NULL
    WHEN 'VARCHAR' THEN json_extract_string(x, '$')
    WHEN 'BOOLEAN' THEN x::VARCHAR
    WHEN 'BIGINT' THEN x::VARCHAR
    WHEN 'UBIGINT' THEN x::VARCHAR
    WHEN 'DOUBLE' THEN CASE
        WHEN isfinite(x::DOUBLE) AND x::DOUBLE = trunc(x::DOUBLE) AND abs(x::DOUBLE) < 1e38
        THEN (x::DOUBLE::HUGEINT)::VARCHAR ELSE x::DOUBLE::VARCHAR END
    ELSE x::VARCHAR END
"""
_KEYS_MACRO = """
CREATE OR REPLACE TEMP MACRO ge_keys_of(v) AS list_distinct(list_filter(
    CASE WHEN json_type(v) = 'ARRAY' THEN list_transform(json_extract(v, '$[*]'), x -> ge_norm(x))
         ELSE [ge_norm(v)] END, k -> k IS NOT NULL))
"""


def gap_us(days: float) -> int:
    """A gap in days as whole microseconds (the same rounding everywhere)."""
    return int(round(days * US_PER_DAY))


def _resolve_expr(path: str) -> tuple[str, list[Any]]:
    """SQL for the JSON value at a dotted path of ``raw`` (NULL when missing or null)."""
    parts, params = [], []
    for jp in json_paths(path):
        parts.append("CASE WHEN json_type(raw, ?) <> 'NULL' THEN json_extract(raw, ?) END")
        params += [jp, jp]
    return (f"coalesce({', '.join(parts)})" if len(parts) > 1 else parts[0]), params


class GraphSQL:
    """The working tables of one graph build on one cursor."""

    def __init__(self, cursor):
        self.cur = cursor
        self.cur.execute(_NORM_MACRO)
        self.cur.execute("CREATE OR REPLACE TEMP MACRO ge_ts(us) AS make_timestamp(us)::TIMESTAMPTZ")
        self.cur.execute(_KEYS_MACRO)
        self.cur.execute("CREATE OR REPLACE TEMP TABLE ge_keys (side VARCHAR, event_id VARCHAR, k VARCHAR)")
        self.cur.execute("CREATE OR REPLACE TEMP TABLE ge_src (src VARCHAR, event_id VARCHAR, ts TIMESTAMPTZ)")

    def q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self.cur.execute(sql, list(params)).fetchall()

    # ------------------------------------------------------------------ keys

    def load_keys(self, side: str, event_type: str, path: str | None) -> None:
        """Join keys of every event of ``event_type`` at ``path`` (``None``: one constant key)."""
        if path is None:
            self.cur.execute("INSERT INTO ge_keys SELECT ?, id, '*' FROM events WHERE type = ?", [side, event_type])
            return
        expr, params = _resolve_expr(path)
        self.cur.execute(
            f"""INSERT INTO ge_keys SELECT ?, id, k FROM (
                    SELECT id, unnest(ge_keys_of({expr})) AS k FROM events WHERE type = ?)""",
            [side, *params, event_type])

    def load_sources(self, src: str, event_type: str, match_side: str | None,
                     match_keys: list[str] | None) -> None:
        """Cause or trigger events of a spec after its ``match_field``/``match_value`` filter.

        With a match field the event's key set there must intersect the value's keys
        (``match_keys``); with no value it must merely resolve."""
        if match_side is None:
            self.cur.execute("INSERT INTO ge_src SELECT ?, id, ts FROM events WHERE type = ?", [src, event_type])
        elif match_keys is None:
            self.cur.execute(
                "INSERT INTO ge_src SELECT ?, id, ts FROM events WHERE type = ? AND id IN "
                "(SELECT event_id FROM ge_keys WHERE side = ?)", [src, event_type, match_side])
        else:
            self.cur.execute(
                "INSERT INTO ge_src SELECT ?, id, ts FROM events WHERE type = ? AND id IN "
                "(SELECT event_id FROM ge_keys WHERE side = ? AND k IN (SELECT unnest(?::VARCHAR[])))",
                [src, event_type, match_side, match_keys])

    def finish_loading(self) -> None:
        self.cur.execute("CREATE OR REPLACE TEMP TABLE ge_keys AS SELECT DISTINCT * FROM ge_keys "
                         "ORDER BY side, k, event_id")

    # ------------------------------------------------------------------ joins

    @staticmethod
    def _extra_joins(sides: list[tuple[str, str]], a: str, b: str) -> tuple[str, list[Any]]:
        """EXISTS conditions: pair (a, b) shares a key on every further join side pair."""
        conds, params = [], []
        for sa, sb in sides:
            conds.append(f"EXISTS (SELECT 1 FROM ge_keys ka JOIN ge_keys kb ON ka.k = kb.k WHERE ka.side = ? "
                         f"AND ka.event_id = {a} AND kb.side = ? AND kb.event_id = {b})")
            params += [sa, sb]
        return (" AND ".join(conds) or "true"), params

    def causal_edges(self, src: str, effect_type: str, sides: list[tuple[str, str]], gap: int) -> list[tuple]:
        """(cause_id, effect_id): the earliest effect (by time, then id) strictly after the
        cause, within the gap, on which every join holds."""
        (c0, e0), rest = sides[0], sides[1:]
        extra, extra_p = self._extra_joins(rest, "p.cid", "p.eid")
        return self.q(
            f"""WITH c AS (SELECT event_id AS cid, ts AS cts FROM ge_src WHERE src = ?),
                     e AS (SELECT id AS eid, ts AS ets FROM events WHERE type = ?),
                     p AS (SELECT DISTINCT c.cid, c.cts, e.eid, e.ets
                           FROM c JOIN ge_keys ck ON ck.side = ? AND ck.event_id = c.cid
                           JOIN ge_keys ek ON ek.side = ? AND ek.k = ck.k
                           JOIN e ON e.eid = ek.event_id
                           WHERE e.ets > c.cts AND e.ets <= c.cts + to_microseconds(?::BIGINT))
                SELECT cid, eid FROM p WHERE {extra}
                QUALIFY row_number() OVER (PARTITION BY cid ORDER BY ets, eid) = 1
                ORDER BY cid""",
            [src, effect_type, c0, e0, gap, *extra_p])

    def next_effects(self, src: str, effect_type: str, sides: list[tuple[str, str]], gap: int) -> list[tuple]:
        """(cause_id, effect_id) for the very next effect-type event (by time, then id)
        strictly after each cause and within the gap, when both sides resolve every
        join but some join fails: temporal adjacency without a shared id."""
        has_keys = " AND ".join(
            "EXISTS (SELECT 1 FROM ge_keys WHERE side = ? AND event_id = n.cid) AND "
            "EXISTS (SELECT 1 FROM ge_keys WHERE side = ? AND event_id = n.eid)" for _ in sides)
        has_p = [s for pair in sides for s in pair]
        joined, joined_p = self._extra_joins(sides, "n.cid", "n.eid")
        return self.q(
            f"""WITH c AS (SELECT event_id AS cid, ts AS cts FROM ge_src WHERE src = ?),
                     ef AS (SELECT ts AS ets, min(id) AS eid FROM events WHERE type = ? GROUP BY ts),
                     n AS (SELECT c.cid, c.cts, ef.eid, ef.ets FROM c ASOF JOIN ef ON c.cts < ef.ets)
                SELECT cid, eid FROM n
                WHERE ets <= cts + to_microseconds(?::BIGINT) AND {has_keys} AND NOT ({joined})
                ORDER BY cid""",
            [src, effect_type, gap, *has_p, *joined_p])

    def silence_status(self, src: str, response_type: str, sides: list[tuple[str, str]], gap: int) -> list[tuple]:
        """Per trigger: (trigger_id, missing_key, presence_id, before_id, outside_id).

        ``presence`` is the earliest joined response strictly after the trigger within
        the gap; ``before`` the latest joined response at or before the trigger;
        ``outside`` the earliest joined response after the gap."""
        (t0, r0), rest = sides[0], sides[1:]
        extra, extra_p = self._extra_joins(rest, "p.tid", "p.rid")
        missing = " OR ".join("NOT EXISTS (SELECT 1 FROM ge_keys WHERE side = ? AND event_id = t.tid)"
                              for _ in sides)
        missing_p = [t for t, _ in sides]
        return self.q(
            f"""WITH t AS (SELECT event_id AS tid, ts AS tts FROM ge_src WHERE src = ?),
                     p AS (SELECT DISTINCT t.tid, t.tts, r.id AS rid, r.ts AS rts
                           FROM t JOIN ge_keys tk ON tk.side = ? AND tk.event_id = t.tid
                           JOIN ge_keys rk ON rk.side = ? AND rk.k = tk.k
                           JOIN events r ON r.id = rk.event_id AND r.type = ?
                           WHERE r.id <> t.tid),
                     j AS (SELECT * FROM p WHERE {extra}),
                     g AS (SELECT tid,
                                  min({{'t': rts, 'i': rid}}) FILTER (WHERE rts > tts
                                      AND rts <= tts + to_microseconds(?::BIGINT)).i AS presence,
                                  max({{'t': rts, 'i': rid}}) FILTER (WHERE rts <= tts).i AS before,
                                  min({{'t': rts, 'i': rid}}) FILTER (WHERE rts > tts
                                      + to_microseconds(?::BIGINT)).i AS outside
                           FROM j GROUP BY tid)
                SELECT t.tid, ({missing}) AS missing, g.presence, g.before, g.outside
                FROM t LEFT JOIN g ON g.tid = t.tid ORDER BY t.tid""",
            [src, t0, r0, response_type, *extra_p, gap, gap, *missing_p])

    # ------------------------------------------------------------------ lookups

    def events_info(self, ids: Iterable[str]) -> list[tuple]:
        """(id, type, ts_us, raw, actors, found artifact ids, their subsystems, max created_us)."""
        return self.q(
            """WITH ids AS (SELECT DISTINCT unnest(?::VARCHAR[]) AS id),
                    art AS (SELECT ea.event_id, list(DISTINCT x.id ORDER BY x.id) AS arts,
                                   list(DISTINCT x.subsystem ORDER BY x.subsystem) AS subs,
                                   max(epoch_us(x.created)) AS max_created
                            FROM event_artifacts ea JOIN artifacts x ON x.id = ea.artifact_id
                            WHERE ea.event_id IN (SELECT id FROM ids) GROUP BY ea.event_id),
                    act AS (SELECT event_id, list(DISTINCT actor ORDER BY actor) AS actors FROM event_actors
                            WHERE event_id IN (SELECT id FROM ids) GROUP BY event_id)
               SELECT e.id, e.type, epoch_us(e.ts), e.raw::VARCHAR, coalesce(act.actors, []),
                      coalesce(art.arts, []), coalesce(art.subs, []), art.max_created
               FROM events e JOIN ids USING (id) LEFT JOIN art ON art.event_id = e.id
               LEFT JOIN act ON act.event_id = e.id ORDER BY e.id""", [sorted(set(ids))])

    def artifacts_info(self, ids: Iterable[str]) -> dict[str, tuple[str, int | None]]:
        """artifact id -> (subsystem, created_us) for the ids that exist."""
        rows = self.q("SELECT id, subsystem, epoch_us(created) FROM artifacts "
                      "WHERE id IN (SELECT unnest(?::VARCHAR[])) ORDER BY id", [sorted(set(ids))])
        return {r[0]: (r[1], r[2]) for r in rows}

    def existing_in(self, pairs: list[tuple[str, str | None]]) -> set[tuple[str, str | None]]:
        """Which (artifact id, subsystem-or-None) pairs exist in the corpus."""
        if not pairs:
            return set()
        ids = [p[0] for p in pairs]
        subs = [p[1] or "" for p in pairs]
        rows = self.q(
            """SELECT q.id, q.sub FROM (SELECT unnest(?::VARCHAR[]) AS id, unnest(?::VARCHAR[]) AS sub) q
               JOIN artifacts x ON x.id = q.id AND (q.sub = '' OR x.subsystem = q.sub) ORDER BY 1, 2""",
            [ids, subs])
        return {(r[0], r[1] or None) for r in rows}

    def bm25_batch(self, queries: list[tuple[int, str, str, int]]) -> list[tuple[int, str]]:
        """Ranked BM25 hits for many ``(qid, subsystem, query, limit)`` at once.

        The same scoring as the FTS extension's ``match_bm25`` (k=1.2, b=0.75, any
        term), computed set-wise over the index tables instead of once per query;
        only hits inside the query's subsystem count; ties break by artifact id."""
        if not queries:
            return []
        self.cur.execute("CREATE OR REPLACE TEMP TABLE ge_q (qid INTEGER, subsystem VARCHAR, query VARCHAR, lim INTEGER)")
        self.cur.executemany("INSERT INTO ge_q VALUES (?, ?, ?, ?)", [list(q) for q in queries])
        return self.q(
            """WITH tok AS (SELECT DISTINCT qid, stem(t, 'porter') AS t FROM
                              (SELECT qid, unnest(fts_main_artifact_text.tokenize(query)) AS t FROM ge_q)),
                    qt AS (SELECT tok.qid, d.termid, d.df FROM tok JOIN fts_main_artifact_text.dict d ON d.term = tok.t),
                    tf AS (SELECT qt.qid, tm.docid, qt.termid, any_value(qt.df) AS df, count(*) AS tf
                           FROM qt JOIN fts_main_artifact_text.terms tm ON tm.termid = qt.termid
                           GROUP BY qt.qid, tm.docid, qt.termid),
                    st AS (SELECT num_docs, avgdl FROM fts_main_artifact_text.stats),
                    sc AS (SELECT tf.qid, d.name AS id,
                                  sum(log(((st.num_docs - tf.df) + 0.5) / (tf.df + 0.5) + 1)
                                      * ((tf.tf * 2.2) / (tf.tf + 1.2 * (0.25 + 0.75 * (d.len / st.avgdl)))))
                                      AS score
                           FROM tf JOIN fts_main_artifact_text.docs d ON d.docid = tf.docid, st
                           GROUP BY tf.qid, d.name)
               SELECT q.qid, sc.id FROM sc JOIN ge_q q ON q.qid = sc.qid
               JOIN artifacts x ON x.id = sc.id AND x.subsystem = q.subsystem
               QUALIFY row_number() OVER (PARTITION BY q.qid ORDER BY sc.score DESC, sc.id) <= q.lim
               ORDER BY q.qid, sc.score DESC, sc.id""")

    # ------------------------------------------------------------------ perspective

    def perspective_actors(self, configured: list[str], limit: int) -> list[str]:
        """Configured actors that hold some role, else the most active non-system ones."""
        if configured:
            rows = self.q("SELECT DISTINCT actor FROM actor_roles WHERE actor IN (SELECT unnest(?::VARCHAR[])) "
                          "ORDER BY actor", [configured])
            return [r[0] for r in rows]
        rows = self.q(
            """SELECT ea.actor FROM event_actors ea JOIN actors a ON a.actor = ea.actor AND NOT a.system
               WHERE EXISTS (SELECT 1 FROM actor_roles r WHERE r.actor = ea.actor)
               GROUP BY ea.actor ORDER BY count(*) DESC, ea.actor LIMIT ?""", [limit])
        return [r[0] for r in rows]

    def perspective_pivots(self, actors: list[str], per_actor: int) -> list[tuple[str, int]]:
        """(actor, as_of_us): quantiles of each actor's own event times (of the whole log
        when the actor took part in nothing)."""
        return self.q(
            """WITH a AS (SELECT unnest(?::VARCHAR[]) AS actor),
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
               ORDER BY 1, 2""", [actors, per_actor, per_actor])

    def perspective_candidates(self, pivots: list[tuple[str, int]]) -> list[tuple]:
        """For every (actor, as_of) and event type: the latest target event at or before
        as-of and the earliest after it. A target has at least one artifact in the
        corpus and facts that describe it uniquely within its type.
        Rows: (actor, as_of_us, event_id)."""
        if not pivots:
            return []
        self.cur.execute("CREATE OR REPLACE TEMP TABLE ge_pv (actor VARCHAR, as_of TIMESTAMPTZ)")
        self.cur.execute("INSERT INTO ge_pv SELECT unnest(?::VARCHAR[]), ge_ts(unnest(?::BIGINT[]))",
                         [[p[0] for p in pivots], [p[1] for p in pivots]])
        return self.q(
            """WITH tg AS (SELECT e.id, e.type, e.ts,
                                  count(*) OVER (PARTITION BY e.type,
                                      coalesce(json_extract(e.raw, '$.facts')::VARCHAR, '{}')) AS same
                           FROM events e
                           WHERE EXISTS (SELECT 1 FROM event_artifacts ea JOIN artifacts x ON x.id = ea.artifact_id
                                         WHERE ea.event_id = e.id)),
                    first AS (SELECT type, ts, min(id) AS id FROM tg WHERE same = 1 GROUP BY type, ts),
                    pt AS (SELECT pv.actor, pv.as_of, ty.type FROM ge_pv pv, (SELECT DISTINCT type FROM first) ty),
                    back AS (SELECT pt.actor, pt.as_of, f.id FROM pt ASOF JOIN first f
                             ON pt.type = f.type AND f.ts <= pt.as_of),
                    fwd AS (SELECT pt.actor, pt.as_of, f.id FROM pt ASOF JOIN first f
                            ON pt.type = f.type AND f.ts > pt.as_of)
               SELECT DISTINCT actor, epoch_us(as_of), id FROM (SELECT * FROM back UNION ALL SELECT * FROM fwd)
               ORDER BY 1, 2, 3""")

    def gate_batch(self, rows: list[tuple[str, str, int, str]]) -> list[tuple]:
        """The cone (``cone.gate_sql``) for many ``(key, actor, as_of_us, artifact_id)`` rows."""
        if not rows:
            return []
        self.cur.execute("CREATE OR REPLACE TEMP TABLE ge_pairs (key VARCHAR, actor VARCHAR, as_of TIMESTAMPTZ,"
                         " artifact_id VARCHAR)")
        cols = list(zip(*rows))
        self.cur.execute("INSERT INTO ge_pairs SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]),"
                         " ge_ts(unnest(?::BIGINT[])), unnest(?::VARCHAR[])",
                         [list(cols[0]), list(cols[1]), list(cols[2]), list(cols[3])])
        return self.q(gate_sql("ge_pairs"))

    def roles_batch(self, pivots: list[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
        """Roles each actor holds at each as-of (sorted)."""
        if not pivots:
            return {}
        rows = self.q(
            """WITH pv AS (SELECT unnest(?::VARCHAR[]) AS actor, unnest(?::BIGINT[]) AS us)
               SELECT pv.actor, pv.us, list(DISTINCT ar.role ORDER BY ar.role)
               FROM pv JOIN actor_roles ar ON ar.actor = pv.actor
                 AND ar.since <= ge_ts(pv.us) AND ge_ts(pv.us) < ar.until
               GROUP BY pv.actor, pv.us ORDER BY 1, 2""",
            [[p[0] for p in pivots], [p[1] for p in pivots]])
        return {(r[0], r[1]): list(r[2]) for r in rows}

    def granted_batch(self, pivots: list[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
        """Subsystems granted to each actor's roles at each as-of (sorted)."""
        if not pivots:
            return {}
        rows = self.q(
            """WITH pv AS (SELECT unnest(?::VARCHAR[]) AS actor, unnest(?::BIGINT[]) AS us)
               SELECT pv.actor, pv.us, list(DISTINCT g.subsystem ORDER BY g.subsystem)
               FROM pv JOIN actor_roles ar ON ar.actor = pv.actor
                 AND ar.since <= ge_ts(pv.us) AND ge_ts(pv.us) < ar.until
               JOIN grants g ON g.role = ar.role
                 AND g.since <= ge_ts(pv.us) AND ge_ts(pv.us) < g.until
               GROUP BY pv.actor, pv.us ORDER BY 1, 2""",
            [[p[0] for p in pivots], [p[1] for p in pivots]])
        return {(r[0], r[1]): list(r[2]) for r in rows}

    def non_unique_descriptions(self, ids: Iterable[str]) -> set[str]:
        """Events whose type and facts equal another event's: their description is ambiguous."""
        rows = self.q(
            """WITH ids AS (SELECT DISTINCT unnest(?::VARCHAR[]) AS id),
                    mine AS (SELECT e.id, e.type, coalesce(json_extract(e.raw, '$.facts')::VARCHAR, '{}') AS f
                             FROM events e JOIN ids USING (id)),
                    cnt AS (SELECT e.type, coalesce(json_extract(e.raw, '$.facts')::VARCHAR, '{}') AS f,
                                   count(*) AS n
                            FROM events e WHERE e.type IN (SELECT type FROM mine) GROUP BY ALL)
               SELECT mine.id FROM mine JOIN cnt USING (type, f) WHERE cnt.n > 1 ORDER BY 1""",
            [sorted(set(ids))])
        return {r[0] for r in rows}
