"""All SQL of the event graph (set-based, parameterised): causal edges, distractors,
silence records, their search spaces, and the event and artifact lookups the question
generators share. Question-only queries are in ``questions/sql.py``.

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

import msgspec

from ..contract.paths import json_paths
from ..store.store import fts_extension_path

US_PER_DAY = 86_400_000_000
FTS = "fts_main_artifact_text"  # the store's BM25 index (``Store.ensure_fts``)
# The options Store.ensure_fts builds that index with: reading the text without the
# index must tokenize, stop and stem as it does (tests/graph/test_graph_bm25.py).
FTS_OPTIONS = "stemmer = 'porter', stopwords = 'english', lower = 1, strip_accents = 1, ignore = '(\\.|[^a-z0-9])+'"
# The index's tokens of a text: its ``tokenize`` macro replaces runs of ``ignore`` by a space
# and splits on whitespace, i.e. the maximal runs of [a-z0-9] (and an empty text at an edge,
# never a term) — here in one regex instead of two.
_LOWERED = "lower(strip_accents(CAST({} AS VARCHAR)))"
_TOKENS = f"string_split_regex({_LOWERED}, '[^a-z0-9]+')"
# One term's BM25 part in one document (k1 = 1.2, b = 0.75), as match_bm25 computes it,
# in integer 1e-9 units: exact, so sums and ties are the same every run.
_BM25_WEIGHT = """round(log(((st.num_docs - tf.df) + 0.5) / (tf.df + 0.5) + 1)
    * ((tf.tf * 2.2) / (tf.tf + 1.2 * (0.25 + 0.75 * ({len} / st.avgdl)))) * 1e9)::BIGINT"""
_JSON = msgspec.json.Encoder()


def _column_json(values: tuple[Any, ...]) -> str:
    """One column for :meth:`GraphSQL.put` as a JSON list DuckDB reads as texts: a column of
    strings and integers goes as it is (an integer's JSON text is its decimal text, what
    ``str`` gives), any other value as its ``str``, ``None`` as empty text."""
    if set(map(type, values)) <= {str, int}:  # DuckDB keeps a number's text, however long
        return _JSON.encode(values).decode()
    return _JSON.encode(["" if v is None else str(v) for v in values]).decode()


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


_EDGE_COLUMNS = "src, cause, effect, cause_us, effect_us"


def gap_us(days: float) -> int:
    """A gap in days as whole microseconds (the same rounding everywhere)."""
    return int(round(days * US_PER_DAY))


def _two_paths(path: str) -> tuple[str, str]:
    """The (at most two) DuckDB JSON paths tried in order for a dotted path."""
    paths = json_paths(path)
    return paths[0], paths[-1]


class GraphSQL:
    """The working tables of one graph build on one cursor.

    Every spec of a kind is evaluated by one query: spec definitions go into small
    tables (``ge_specs``, ``ge_joins``, ``ge_sidedef``) and the queries join them, so
    the number of statements does not grow with the number of specs."""

    def __init__(self, cursor):
        self.cur = cursor
        self.cur.execute(_NORM_MACRO)
        self.cur.execute("CREATE OR REPLACE TEMP MACRO ge_ts(us) AS make_timestamp(us)::TIMESTAMPTZ")
        self.cur.execute(_KEYS_MACRO)

    def q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self.cur.execute(sql, list(params)).fetchall()

    @staticmethod
    def drop_tables(cursor) -> None:
        """Drop the ``ge_*`` working tables a build left on ``cursor``: a caller that keeps the
        store open after the graph is used up (eval's episodes) need not hold them."""
        names = cursor.execute(
            "SELECT table_name FROM duckdb_tables() WHERE temporary AND starts_with(table_name, 'ge_')"
        ).fetchall()
        for (name,) in names:
            cursor.execute(f'DROP TABLE IF EXISTS temp."{name}"')

    # What ``build.sampled_graph`` builds on its cursor and reads no more once it has returned
    # its records: ~14 MB at 22.5K events (DuckDB gives each small table whole blocks).
    SAMPLING_TABLES = (
        "ge_keys",
        "ge_src",
        "ge_pathkeys",
        "ge_edge",
        "ge_next",
        "ge_sil",
        "ge_e",
        "ge_d",
        "ge_multi",
        "ge_sc",
        "ge_s",
    )

    @staticmethod
    def drop_sampling_tables(cursor) -> None:
        """Drop :data:`SAMPLING_TABLES` from ``cursor``: the generator, once its graph is sampled
        (the verifier keeps them: its level 3 reads ``ge_e`` and ``ge_sc``)."""
        for name in GraphSQL.SAMPLING_TABLES:
            cursor.execute(f"DROP TABLE IF EXISTS temp.{name}")

    def put(self, table: str, columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Any]]) -> None:
        """Load Python rows into a temp table in one statement: each column goes in as one
        JSON list of texts (a value as its ``str``, ``None`` as empty text), cast to the
        column's type by DuckDB.

        Passing long Python lists as query parameters costs DuckDB a failed ``import
        pandas`` per element (seconds at 10K ids); a CSV file cost a few milliseconds even
        for one row and twice the time of JSON for many."""
        rows = rows if isinstance(rows, list) else list(rows)
        if not rows:
            decl = ", ".join(f"{n} {t}" for n, t in columns)
            self.cur.execute(f"CREATE OR REPLACE TEMP TABLE {table} ({decl})")
            return
        params = [_column_json(values) for values in zip(*rows)]
        select = ", ".join(f"unnest(from_json(?, '[\"VARCHAR\"]'))::{t} AS {n}" for n, t in columns)
        self.cur.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT {select}", params)

    # ------------------------------------------------------------------ loading

    def load(
        self,
        sides: list[tuple[str, str, str | None]],
        sources: list[tuple[str, str, str, bool]],
        matches: list[tuple[str, str]],
        specs: list[tuple[str, str, str, int, int, bool]],
        joins: list[tuple[str, int, str, str]],
    ) -> None:
        """Load spec definitions and derive keys and source events, all specs at once.

        ``sides``: (side, event type, dotted path or None for a constant key);
        ``sources``: (src, event type, match side or '', match any value);
        ``matches``: (src, key) accepted match keys; ``specs``: (src, kind 'c'|'s',
        destination type, gap µs, number of joins, has real joins);
        ``joins``: (src, join index, source side, destination side)."""
        self.put(
            "ge_sidedef",
            [("side", "VARCHAR"), ("type", "VARCHAR"), ("p1", "VARCHAR"), ("p2", "VARCHAR"), ("const", "BOOLEAN")],
            ([s, t, *(_two_paths(p) if p else ("$", "$")), p is None] for s, t, p in sides),
        )
        self.put(
            "ge_srcdef",
            [("src", "VARCHAR"), ("type", "VARCHAR"), ("match_side", "VARCHAR"), ("match_any", "BOOLEAN")],
            sources,
        )
        self.put("ge_match", [("src", "VARCHAR"), ("k", "VARCHAR")], matches)
        self.put(
            "ge_specs",
            [
                ("src", "VARCHAR"),
                ("kind", "VARCHAR"),
                ("dst_type", "VARCHAR"),
                ("gap", "BIGINT"),
                ("nj", "INTEGER"),
                ("real", "BOOLEAN"),
            ],
            specs,
        )
        self.put(
            "ge_joins", [("src", "VARCHAR"), ("j", "INTEGER"), ("a_side", "VARCHAR"), ("b_side", "VARCHAR")], joins
        )
        # Keys are extracted once per distinct (type, path): many sides share one.
        self.cur.execute(
            """CREATE OR REPLACE TEMP TABLE ge_pathkeys AS
               WITH d AS (SELECT DISTINCT type, p1, p2, const FROM ge_sidedef)
               SELECT type, p1, p2, const, event_id, ts, unnest(ks) AS k FROM (
                   SELECT type, p1, p2, const, event_id, ts,
                          -- a string (most keys) is its own key: ge_keys_of's list machinery only for the rest
                          CASE WHEN const THEN ['*'] WHEN json_type(v) = 'VARCHAR' THEN [v ->> '$']
                               ELSE ge_keys_of(v) END AS ks
                   FROM (SELECT *, coalesce(CASE WHEN json_type(v1) <> 'NULL' THEN v1 END,
                                            CASE WHEN json_type(v2) <> 'NULL' THEN v2 END) AS v FROM (
                         SELECT d.*, e.id AS event_id, e.ts,
                                -- each raw document is parsed once per path (twice only for two candidates)
                                CASE WHEN NOT d.const THEN json_extract(e.raw, d.p1) END AS v1,
                                CASE WHEN NOT d.const AND d.p2 <> d.p1 THEN json_extract(e.raw, d.p2) END AS v2
                         FROM d JOIN events e ON e.type = d.type)))"""
        )
        self.cur.execute(
            """CREATE OR REPLACE TEMP TABLE ge_keys AS
               SELECT s.side, k.event_id, k.ts, k.k FROM ge_sidedef s JOIN ge_pathkeys k USING (type, p1, p2, const)
               WHERE k.k IS NOT NULL"""
        )
        self.cur.execute(
            """CREATE OR REPLACE TEMP TABLE ge_src AS
               SELECT d.src, e.id AS event_id, e.ts FROM ge_srcdef d JOIN events e ON e.type = d.type
               WHERE d.match_side = ''
               UNION ALL
               SELECT DISTINCT d.src, k.event_id, k.ts FROM ge_srcdef d JOIN ge_keys k ON k.side = d.match_side
               WHERE d.match_side <> ''
                 AND (d.match_any OR k.k IN (SELECT m.k FROM ge_match m WHERE m.src = d.src))
               ORDER BY 1, 2"""
        )

    # ------------------------------------------------------------------ joins

    _PAIRS = """
        SELECT j.src, j.j, a.event_id AS aid, a.ts AS ats, b.event_id AS bid, b.ts AS bts
        FROM ge_joins j JOIN ge_specs s ON s.src = j.src AND s.kind = '{kind}'
        JOIN ge_src x ON x.src = j.src
        JOIN ge_keys a ON a.side = j.a_side AND a.event_id = x.event_id
        JOIN ge_keys b ON b.side = j.b_side AND b.k = a.k
        WHERE b.event_id <> a.event_id {window}"""

    def _rows(self, sql: str, into: str | None, columns: str) -> list[tuple]:
        """The rows of ``sql``, or (``into``) none: they go to that temp table, columns named."""
        if into is None:
            return self.q(sql)
        self.cur.execute(f"CREATE OR REPLACE TEMP TABLE {into} AS SELECT * FROM ({sql}) AS t({columns})")
        return []

    def causal_edges(self, into: str | None = None) -> list[tuple[str, str, str, int, int]]:
        """(src, cause_id, effect_id, cause_us, effect_us): for every causal spec, the earliest effect (by time,
        then id) strictly after the cause and within the gap on which every join holds."""
        pairs = self._PAIRS.format(kind="c", window="AND b.ts > a.ts AND b.ts <= a.ts + to_microseconds(s.gap)")
        return self._rows(
            f"""WITH pj AS (SELECT DISTINCT * FROM ({pairs})),
                     p AS (SELECT src, aid, any_value(ats) AS ats, bid, any_value(bts) AS bts, count(*) AS n
                           FROM pj GROUP BY src, aid, bid)
                SELECT p.src, p.aid, p.bid, epoch_us(p.ats), epoch_us(p.bts)
                FROM p JOIN ge_specs s ON s.src = p.src WHERE p.n = s.nj
                QUALIFY row_number() OVER (PARTITION BY p.src, p.aid ORDER BY p.bts, p.bid) = 1
                ORDER BY 1, 2""",
            into,
            _EDGE_COLUMNS,
        )

    def next_effects(self, into: str | None = None) -> list[tuple[str, str, str, int, int]]:
        """(src, cause_id, effect_id, cause_us, effect_us): the very next effect-type event (by time, then id)
        strictly after each cause and within the gap, when both sides resolve every join
        but some join fails — temporal adjacency without a shared id. Specs with real
        joins only."""
        return self._rows(
            """WITH s AS (SELECT * FROM ge_specs WHERE kind = 'c' AND real),
                    c AS (SELECT x.src, x.event_id AS cid, x.ts AS cts, s.dst_type, s.gap
                          FROM ge_src x JOIN s ON s.src = x.src),
                    ef AS (SELECT type, ts AS ets, min(id) AS eid FROM events
                           WHERE type IN (SELECT dst_type FROM s) GROUP BY type, ts),
                    n AS (SELECT c.src, c.cid, c.cts, ef.eid, ef.ets, c.gap FROM c
                          ASOF JOIN ef ON c.dst_type = ef.type AND c.cts < ef.ets),
                    w AS (SELECT * FROM n WHERE ets <= cts + to_microseconds(gap)),
                    jj AS (SELECT w.src, w.cid, w.eid, w.cts, w.ets, j.j,
                                  EXISTS (SELECT 1 FROM ge_keys k WHERE k.side = j.a_side AND k.event_id = w.cid) AS ha,
                                  EXISTS (SELECT 1 FROM ge_keys k WHERE k.side = j.b_side AND k.event_id = w.eid) AS hb,
                                  EXISTS (SELECT 1 FROM ge_keys ka JOIN ge_keys kb ON ka.k = kb.k
                                          WHERE ka.side = j.a_side AND ka.event_id = w.cid
                                            AND kb.side = j.b_side AND kb.event_id = w.eid) AS shared
                           FROM w JOIN ge_joins j ON j.src = w.src)
               SELECT src, cid, eid, epoch_us(any_value(cts)), epoch_us(any_value(ets)) FROM jj GROUP BY src, cid, eid
               HAVING bool_and(ha AND hb) AND NOT bool_and(shared) ORDER BY 1, 2""",
            into,
            _EDGE_COLUMNS,
        )

    def silence_status(self, into: str | None = None) -> list[tuple]:
        """Per silence spec and trigger: (src, trigger_id, missing_key, presence_id,
        before_id, outside_id, trigger_us, presence_us). ``presence`` is the earliest joined response strictly after
        the trigger within the gap; ``before`` the latest joined response at or before it;
        ``outside`` the earliest joined response after the gap."""
        pairs = self._PAIRS.format(kind="s", window="")
        return self._rows(
            f"""WITH s AS (SELECT * FROM ge_specs WHERE kind = 's'),
                     pj AS (SELECT DISTINCT * FROM ({pairs})),
                     p AS (SELECT src, aid AS tid, any_value(ats) AS tts, bid AS rid, any_value(bts) AS rts,
                                  count(*) AS n FROM pj GROUP BY src, aid, bid),
                     jn AS (SELECT p.*, s.gap FROM p JOIN s ON s.src = p.src WHERE p.n = s.nj),
                     g AS (SELECT src, tid,
                                  min({{'t': rts, 'i': rid}}) FILTER (WHERE rts > tts
                                      AND rts <= tts + to_microseconds(gap)) AS pr,
                                  max({{'t': rts, 'i': rid}}) FILTER (WHERE rts <= tts).i AS before,
                                  min({{'t': rts, 'i': rid}}) FILTER (WHERE rts > tts
                                      + to_microseconds(gap)).i AS outside
                           FROM jn GROUP BY src, tid),
                     hk AS (SELECT j.src, k.event_id AS tid, count(DISTINCT j.j) AS n
                            FROM ge_joins j JOIN s ON s.src = j.src JOIN ge_keys k ON k.side = j.a_side
                            GROUP BY j.src, k.event_id)
                SELECT x.src, x.event_id, s.real AND coalesce(hk.n, 0) < s.nj AS missing,
                       g.pr.i, g.before, g.outside, epoch_us(x.ts), epoch_us(g.pr.t)
                FROM ge_src x JOIN s ON s.src = x.src
                LEFT JOIN g ON g.src = x.src AND g.tid = x.event_id
                LEFT JOIN hk ON hk.src = x.src AND hk.tid = x.event_id
                ORDER BY 1, 2""",
            into,
            "src, tid, missing, presence, before, outside, tts, pts",
        )

    # ------------------------------------------------------------------ sampled records

    # ``ge_edge`` / ``ge_next`` / ``ge_sil``: the rows of causal_edges / next_effects /
    # silence_status (``into``); ``ge_cname`` (src, name) and ``ge_sname`` (src, spec index,
    # key) name their specs. The record rules of ``build.build_graph`` as SQL: edges and
    # distractors unique by spec name (a distractor never a pair some spec links), an
    # effect reached from two or more causes is multi-cause; a response answering several
    # triggers of a spec kept for its earliest (time, then id) trigger.
    _RECORDS = (
        """CREATE OR REPLACE TEMP TABLE ge_e AS
           SELECT DISTINCT n.name, x.cause, x.effect, x.cause_us, x.effect_us FROM ge_edge x JOIN ge_cname n USING (src)""",
        """CREATE OR REPLACE TEMP TABLE ge_d AS
           SELECT DISTINCT n.name, x.cause, x.effect, x.cause_us, x.effect_us FROM ge_next x JOIN ge_cname n USING (src)
           ANTI JOIN (SELECT DISTINCT cause, effect FROM ge_e) l ON l.cause = x.cause AND l.effect = x.effect""",
        """CREATE OR REPLACE TEMP TABLE ge_multi AS
           SELECT effect FROM ge_e GROUP BY effect HAVING count(DISTINCT cause) > 1""",
        """CREATE OR REPLACE TEMP TABLE ge_sc AS
           SELECT n.i, n.key, x.tid, x.tts, x.presence, x.pts,
                  CASE WHEN x.missing THEN 'missing_join_key' WHEN x.presence IS NOT NULL THEN 'presence'
                       WHEN x.before IS NOT NULL THEN 'response_before_trigger'
                       WHEN x.outside IS NOT NULL THEN 'response_outside_gap' ELSE 'absence' END AS status,
                  CASE WHEN x.missing OR x.presence IS NOT NULL THEN NULL ELSE coalesce(x.before, x.outside) END
                      AS other
           FROM ge_sil x JOIN ge_sname n USING (src)""",
        """CREATE OR REPLACE TEMP TABLE ge_s AS
           SELECT i, key, 'presence' AS kind, tid, tts, presence, pts FROM ge_sc WHERE status = 'presence'
           QUALIFY row_number() OVER (PARTITION BY i, presence ORDER BY tts, tid) = 1
           UNION ALL
           SELECT i, key, 'absence', tid, tts, NULL, NULL FROM ge_sc WHERE status = 'absence'""",
    )

    def sampled_records(self, prefixes: tuple[str, str], keep: tuple[int, int]) -> dict[str, Any]:
        """Per (spec name, causal or not) and per (silence key, kind), the ``keep`` records
        with the smallest ``sha256(prefix + spec + \\x1f + parts)`` (parts: cause and effect,
        or the trigger), as ``questions.pool.seeded_sample`` orders them; plus every count the
        graph's stats report and its first 100 ambiguous triggers. Spec names and silence keys
        must be unique (one spec per group, so ties cannot remain)."""
        for sql in self._RECORDS:
            self.cur.execute(sql)
        # the ``keep`` smallest per group by a bounded heap (min_by), not a sort of every record
        causal = self.q(
            """WITH p AS (SELECT name, true AS causal, cause, effect, cause_us, effect_us FROM ge_e
                          UNION ALL SELECT name, false, cause, effect, cause_us, effect_us FROM ge_d),
                    top AS (SELECT unnest(min_by(p, (sha256(? || p.name || chr(31) || p.cause || chr(31) || p.effect),
                                                     p.cause), ?)) AS p
                            FROM p GROUP BY p.name, p.causal)
               SELECT p.*, m.effect IS NOT NULL AS multi FROM (SELECT unnest(p) FROM top) p
               LEFT JOIN ge_multi m ON p.causal AND m.effect = p.effect
               ORDER BY ALL""",
            [prefixes[0], keep[0]],
        )
        silence = self.q(
            """SELECT unnest(r) FROM (
                   SELECT unnest(min_by({'i': i, 'kind': kind, 'tid': tid, 'tts': tts, 'presence': presence, 'pts': pts},
                                        (sha256(? || key || chr(31) || tid), tid), ?)) AS r
                   FROM ge_s GROUP BY key, kind)
               ORDER BY ALL""",
            [prefixes[1], keep[1]],
        )
        ambiguous = self.q(
            "SELECT i, tid, status, other FROM ge_sc WHERE status NOT IN ('presence', 'absence')"
            " ORDER BY key, tid LIMIT 100"
        )
        counts = self.q(
            """SELECT 'causal_edges', count(*) FROM ge_e UNION ALL SELECT 'distractors', count(*) FROM ge_d
               UNION ALL SELECT 'multi_cause_effects', count(*) FROM ge_multi
               UNION ALL SELECT 'presences_all', count(*) FROM ge_sc WHERE status = 'presence'
               UNION ALL SELECT kind || 's', count(*) FROM ge_s GROUP BY kind
               UNION ALL SELECT status, count(*) FROM ge_sc WHERE status NOT IN ('presence', 'absence') GROUP BY status"""
        )
        return {"pairs": causal, "triggers": silence, "ambiguous": ambiguous, "counts": dict(counts)}

    # ------------------------------------------------------------------ lookups

    def events_info(self, ids: Iterable[str]) -> list[tuple]:
        """(id, type, ts_us, raw, actors, found artifact ids, their subsystems, max created_us)."""
        self.put("ge_ids", [("id", "VARCHAR")], ([i] for i in sorted(set(ids))))
        return self.q(
            """WITH ids AS (SELECT DISTINCT id FROM ge_ids),
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
               LEFT JOIN act ON act.event_id = e.id ORDER BY e.id"""
        )

    def event_types(self) -> list[str]:
        """Every event type of the log (sorted)."""
        return [r[0] for r in self.q("SELECT DISTINCT type FROM events ORDER BY 1")]

    def artifacts_info(self, ids: Iterable[str]) -> dict[str, tuple[str, int | None]]:
        """artifact id -> (subsystem, created_us) for the ids that exist."""
        self.put("ge_ids", [("id", "VARCHAR")], ([i] for i in sorted(set(ids))))
        rows = self.q(
            "SELECT id, subsystem, epoch_us(created) FROM artifacts WHERE id IN (SELECT id FROM ge_ids) ORDER BY id"
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def existing_in(self, pairs: list[tuple[str, str | None]]) -> set[tuple[str, str | None]]:
        """Which (artifact id, subsystem-or-None) pairs exist in the corpus."""
        if not pairs:
            return set()
        self.put("ge_ids2", [("id", "VARCHAR"), ("sub", "VARCHAR")], ([a, b or ""] for a, b in pairs))
        rows = self.q(
            """SELECT q.id, q.sub FROM ge_ids2 q
               JOIN artifacts x ON x.id = q.id AND (q.sub = '' OR x.subsystem = q.sub) ORDER BY 1, 2"""
        )
        return {(r[0], r[1] or None) for r in rows}

    def absence_doubts(
        self,
        windows: list[tuple[int, str, str, int, int]],
        paths: list[tuple[int, str, str]],
        keys: list[tuple[int, str]],
        spaces: list[tuple[int, str]],
    ) -> dict[int, tuple[str, str]]:
        """Why an absence candidate could be answered "yes" on its face: ``record -> (reason,
        event id)`` for the records some event of the response type could answer (see
        ``build.doubtful_absences``). The events looked at are those of the response type
        (never the trigger) inside the window — strictly after the trigger, at most the gap
        later (``windows``: record, trigger id, response type, window start and end µs) — or,
        at any time, referencing an artifact of the record's expected search space
        (``spaces``). Reasons, the first that holds (then the earliest event by time and id):

        ``response_without_join_key``: a response join path (``paths``: record, first and
        second DuckDB path) resolves on the event to no key; ``response_mentions_key``: the
        event's text (its record without id, type and timestamp, then the title and text of
        the artifacts it references), lowered with every run of characters other than
        ``a-z0-9`` read as one space, holds a trigger key (``keys``: record, key normalised
        so with a space around, `` inc 42 ``)."""
        self.put(
            "ge_dwin",
            [("rid", "INTEGER"), ("trig", "VARCHAR"), ("rtype", "VARCHAR"), ("lo", "BIGINT"), ("hi", "BIGINT")],
            windows,
        )
        self.put("ge_dpath", [("rid", "INTEGER"), ("p1", "VARCHAR"), ("p2", "VARCHAR")], paths)
        # each key with its longest word: a text holding the key holds that word (a cheap first test)
        self.put(
            "ge_dkey",
            [("rid", "INTEGER"), ("k", "VARCHAR"), ("w", "VARCHAR")],
            [(rid, k, max(k.split(), key=len)) for rid, k in keys],
        )
        self.put("ge_dspace", [("rid", "INTEGER"), ("aid", "VARCHAR")], spaces)
        # the record without the fields every event has (a key "2026" would match every timestamp)
        text = """lower(json_merge_patch(rt.raw, '{"id": null, "type": null, "timestamp": null}')::VARCHAR
                  || ' ' || coalesce(docs.txt, ''))"""
        norm = "' ' || trim(regexp_replace(low.t, '[^a-z0-9]+', ' ', 'g')) || ' '"
        rows = self.q(
            f"""WITH r AS (SELECT DISTINCT * FROM (
                           SELECT w.rid, e.id, e.ts FROM ge_dwin w JOIN events e
                           ON e.type = w.rtype AND e.ts > ge_ts(w.lo) AND e.ts <= ge_ts(w.hi) AND e.id <> w.trig
                           UNION ALL
                           SELECT w.rid, e.id, e.ts FROM ge_dspace s JOIN ge_dwin w USING (rid)
                           JOIN event_artifacts ea ON ea.artifact_id = s.aid
                           JOIN events e ON e.id = ea.event_id AND e.type = w.rtype AND e.id <> w.trig)),
                     -- each event's record is read once per path, not once per record it may answer
                     ep AS (SELECT DISTINCT r.id, p.p1, p.p2 FROM r JOIN ge_dpath p USING (rid)),
                     missing AS (SELECT ep.* FROM ep JOIN events e ON e.id = ep.id
                                 WHERE coalesce(len(ge_keys_of(json_extract(e.raw, ep.p1))), 0) = 0
                                   AND coalesce(len(ge_keys_of(json_extract(e.raw, ep.p2))), 0) = 0),
                     nokey AS (SELECT DISTINCT r.rid, r.id, r.ts FROM r JOIN ge_dpath p USING (rid)
                               JOIN missing m ON m.id = r.id AND m.p1 = p.p1 AND m.p2 = p.p2),
                     -- the cheap first test piece by piece (the record, each title, each text): the
                     -- word has only a-z0-9, so it never spans the spaces that join the pieces
                     rk AS (SELECT r.rid, r.id, r.ts, k.k, k.w FROM r JOIN ge_dkey k USING (rid)),
                     pieces AS (SELECT e.id, lower(json_merge_patch(e.raw, '{{"id": null, "type": null, "timestamp": null}}')::VARCHAR) AS p
                                FROM events e WHERE e.id IN (SELECT id FROM rk)
                                UNION ALL
                                SELECT ea.event_id, lower(t.title) FROM event_artifacts ea JOIN artifact_text t ON t.id = ea.artifact_id
                                WHERE ea.event_id IN (SELECT id FROM rk)
                                UNION ALL
                                SELECT ea.event_id, lower(t.body) FROM event_artifacts ea JOIN artifact_text t ON t.id = ea.artifact_id
                                WHERE ea.event_id IN (SELECT id FROM rk)),
                     maybe AS (SELECT DISTINCT rk.rid, rk.id, rk.ts, rk.k FROM rk JOIN pieces USING (id) WHERE contains(pieces.p, rk.w)),
                     -- the whole text only of the events that passed it
                     rt AS (SELECT e.id, e.raw FROM events e WHERE e.id IN (SELECT id FROM maybe)),
                     docs AS (SELECT ea.event_id AS id, string_agg(t.title || ' ' || t.body, ' ' ORDER BY t.id) AS txt
                              FROM event_artifacts ea JOIN artifact_text t ON t.id = ea.artifact_id
                              WHERE ea.event_id IN (SELECT id FROM rt) GROUP BY ea.event_id),
                     low AS (SELECT rt.id, {text} AS t FROM rt LEFT JOIN docs USING (id)),
                     txt AS (SELECT low.id, {norm} AS t FROM low),
                     said AS (SELECT DISTINCT m.rid, m.id, m.ts FROM maybe m JOIN txt USING (id)
                              WHERE contains(txt.t, m.k)),
                     d AS (SELECT 1 AS o, 'response_without_join_key' AS why, * FROM nokey
                           UNION ALL SELECT 2, 'response_mentions_key', * FROM said)
                SELECT rid, why, id FROM d QUALIFY row_number() OVER (PARTITION BY rid ORDER BY o, ts, id) = 1
                ORDER BY rid"""
        )
        return {rid: (why, eid) for rid, why, eid in rows}

    def phrase_batch(self, queries: list[tuple[int, str, str, int]]) -> list[tuple[int, str]]:
        """Phrase hits for many ``(qid, subsystem, query, limit)`` at once: the artifacts of the
        subsystem whose id, title or searchable text holds the query as it is written (a
        substring), compared in lower case — the original GroundEval format's selector search
        (``match: phrase``) — the first ``limit`` by artifact id."""
        self.put(
            "ge_phr",
            [("qid", "INTEGER"), ("sub", "VARCHAR"), ("q", "VARCHAR"), ("lim", "INTEGER")],
            queries,
        )
        # each text lowered once, not once per query of its subsystem (140 queries at 22.5K
        # events: 261K lowered bodies before, 19K now)
        return self.q(
            """WITH q AS (SELECT qid, sub, lower(q) AS q, lim FROM ge_phr),
                    a AS (SELECT a.id, a.subsystem, lower(a.id) AS lid, lower(t.title) AS title, lower(t.body) AS body
                          FROM artifacts a JOIN artifact_text t ON t.id = a.id
                          WHERE a.subsystem IN (SELECT sub FROM q))
               SELECT q.qid, a.id FROM q JOIN a ON a.subsystem = q.sub
               WHERE contains(a.lid, q.q) OR contains(a.title, q.q) OR contains(a.body, q.q)
               QUALIFY row_number() OVER (PARTITION BY q.qid ORDER BY a.id) <= any_value(q.lim) OVER (PARTITION BY q.qid)
               ORDER BY 1, 2"""
        )

    RARE_DF = 100  # terms in at most this many documents are "rare" (see ``bm25_batch``)
    PREFILTER_WORDS = 2000  # up to this many query words, only the texts containing one are tokenized twice

    def bm25_batch(self, queries: list[tuple[int, str, str, int]]) -> list[tuple[int, str]]:
        """Ranked BM25 hits for many ``(qid, subsystem, query, limit)`` at once.

        The same scoring as the FTS extension's ``match_bm25`` (k=1.2, b=0.75, any
        term), computed set-wise over the index tables. Only hits inside the query's
        subsystem count; ties break by artifact id; each term's part is rounded to an
        exact 1e-9 integer, so a score is an exact sum whatever the grouping.

        Scoring every query against every posting of its common terms grows with
        queries x postings ("escalation ZD-00015" for 10K tickets), so terms are split:
        the frequent ones (df > ``RARE_DF``) of queries sharing a subsystem and the same
        frequent-term set are scored once per such group and ranked; a query then fully
        scores only the documents its rare terms hit, and takes the others from the top
        ``limit`` of its group's ranking. Exact: a document no rare term hits scores its
        group score; every document above it in the group ranking scores at least as
        much for the query too (rare parts only add), so if it belongs in the query's top
        ``limit``, so do all those above it, and it is within the group's top ``limit``."""
        if not queries:
            return []
        self._bm25_weights(queries)
        return self.q(
            """WITH qg AS (SELECT qid, subsystem, lim,
                                  list_sort(list(term) FILTER (WHERE NOT rare)) AS fsig
                           FROM ge_bq GROUP BY qid, subsystem, lim),
                    grp AS (SELECT DISTINCT subsystem, fsig FROM qg),
                    gterm AS (SELECT subsystem, fsig, unnest(fsig) AS term FROM grp),
                    gsc AS (SELECT g.subsystem, g.fsig, w.id, sum(w.w) AS score
                            FROM gterm g JOIN ge_bw w ON w.term = g.term AND w.subsystem = g.subsystem
                            GROUP BY g.subsystem, g.fsig, w.id),
                    grank AS (SELECT *, row_number() OVER (PARTITION BY subsystem, fsig ORDER BY score DESC, id) AS rn
                              FROM gsc),
                    rq AS (SELECT q.qid, w.id, sum(w.w) AS score FROM ge_bq q
                           JOIN ge_bw w ON w.term = q.term AND w.subsystem = q.subsystem
                           WHERE q.rare GROUP BY q.qid, w.id),
                    cand AS (SELECT rq.qid, rq.id, rq.score + coalesce(g.score, 0) AS score
                             FROM rq JOIN qg ON qg.qid = rq.qid
                             LEFT JOIN gsc g ON g.subsystem = qg.subsystem AND g.fsig = qg.fsig AND g.id = rq.id
                             UNION ALL
                             SELECT qg.qid, g.id, g.score FROM qg
                             JOIN grank g ON g.subsystem = qg.subsystem AND g.fsig = qg.fsig AND g.rn <= qg.lim
                             WHERE NOT EXISTS (SELECT 1 FROM rq WHERE rq.qid = qg.qid AND rq.id = g.id)),
                    top AS (SELECT c.qid, c.id, c.score FROM cand c JOIN qg ON qg.qid = c.qid
                            QUALIFY row_number() OVER (PARTITION BY c.qid ORDER BY c.score DESC, c.id) <= qg.lim)
               SELECT qid, id FROM top ORDER BY qid, score DESC, id"""
        )

    def _bm25_weights(self, queries: list[tuple[int, str, str, int]]) -> None:
        """``ge_bq``: each query's stemmed terms (rare or not); ``ge_bw``: each term's BM25
        weight in each document that holds it. From the store's FTS index when it exists,
        else straight from ``artifact_text`` (the same numbers: building the whole index
        for a few queries cost more than the queries)."""
        self.cur.execute(f"LOAD '{fts_extension_path()}'")  # stem()
        self.put(
            "ge_q", [("qid", "INTEGER"), ("subsystem", "VARCHAR"), ("query", "VARCHAR"), ("lim", "INTEGER")], queries
        )
        if self.q("SELECT 1 FROM duckdb_schemas() WHERE schema_name = ? AND database_name = current_database()", [FTS]):
            self._bm25_from_index()
        else:
            self._bm25_from_text()

    def _bm25_from_index(self) -> None:
        self.cur.execute(
            f"""CREATE OR REPLACE TEMP TABLE ge_bq AS
                WITH tok AS (SELECT DISTINCT qid, stem(t, 'porter') AS t FROM
                               (SELECT qid, unnest({FTS}.tokenize(query)) AS t FROM ge_q))
                SELECT q.qid, q.subsystem, q.lim, d.termid AS term, d.df, d.df <= ? AS rare
                FROM ge_q q JOIN tok ON tok.qid = q.qid JOIN {FTS}.dict d ON d.term = tok.t""",
            [self.RARE_DF],
        )
        self.cur.execute(
            f"""CREATE OR REPLACE TEMP TABLE ge_bw AS
                WITH terms AS (SELECT DISTINCT term, df FROM ge_bq),
                     st AS (SELECT num_docs, avgdl FROM {FTS}.stats),
                     tf AS (SELECT tm.termid AS term, tm.docid, any_value(t.df) AS df, count(*) AS tf
                            FROM terms t JOIN {FTS}.terms tm ON tm.termid = t.term GROUP BY tm.termid, tm.docid)
                SELECT tf.term, d.name AS id, x.subsystem, {_BM25_WEIGHT.format(len="d.len")} AS w
                FROM tf JOIN {FTS}.docs d ON d.docid = tf.docid JOIN artifacts x ON x.id = d.name, st"""
        )

    def _bm25_from_text(self) -> None:
        """The index's numbers for the queries' terms only. One pass over the text counts
        every word (the vocabulary, and the stopped words' total for the mean length); the
        words that stem to a query term are found among the vocabulary's (a few words are
        stemmed, not every token); a second pass reads only the documents whose text holds
        one of them (a token is a substring of the lowered text): their lengths and those
        words' frequencies."""
        stopwords = self._stopwords()

        def words(where: str = "") -> str:
            return f"""SELECT rowid AS docid, id, unnest({_TOKENS.format("title")}) AS w FROM artifact_text {where}
                       UNION ALL SELECT rowid, id, unnest({_TOKENS.format("body")}) FROM artifact_text {where}"""

        self.cur.execute(
            f"""CREATE OR REPLACE TEMP TABLE ge_bvocab AS
                SELECT w, count(*) AS n, len(w) > 0 AND w NOT IN (SELECT sw FROM {stopwords}) AS kept
                FROM ({words()}) GROUP BY w"""
        )
        self.cur.execute(
            f"""CREATE OR REPLACE TEMP TABLE ge_bqt AS SELECT DISTINCT qid, stem(t, 'porter') AS term
                FROM (SELECT qid, unnest({_TOKENS.format("query")}) AS t FROM ge_q)"""
        )
        self.cur.execute(
            """CREATE OR REPLACE TEMP TABLE ge_bhw AS
               SELECT w, term FROM (SELECT w, stem(w, 'porter') AS term FROM ge_bvocab WHERE kept)
               WHERE term IN (SELECT term FROM ge_bqt)"""
        )
        hit = [r[0] for r in self.q("SELECT w FROM ge_bhw ORDER BY w")]  # [a-z0-9]+: a safe pattern
        # each field lowered as its tokens are (one text of both could lose the body: a NUL
        # in the title ends what strip_accents returns)
        fields = " OR ".join(f"regexp_matches({_LOWERED.format(f)}, $re)" for f in ("title", "body"))
        prefilter = f"WHERE {fields}" if len(hit) <= self.PREFILTER_WORDS else ""
        self.cur.execute(
            f"""CREATE OR REPLACE TEMP TABLE ge_btf AS
                WITH k AS (SELECT * FROM ({words(prefilter)})
                           WHERE len(w) > 0 AND w NOT IN (SELECT sw FROM {stopwords})),
                     l AS (SELECT docid, count(*) AS len FROM k GROUP BY docid)
                SELECT hw.term, k.docid, any_value(k.id) AS id, count(*) AS tf, any_value(l.len) AS len
                FROM k JOIN ge_bhw hw USING (w) JOIN l USING (docid) GROUP BY hw.term, k.docid""",
            {"re": "|".join(hit) or "^$"} if prefilter else {},
        )
        self.cur.execute(
            """CREATE OR REPLACE TEMP TABLE ge_bq AS
               WITH d AS (SELECT term, count(*) AS df FROM ge_btf GROUP BY term)
               SELECT q.qid, q.subsystem, q.lim, d.term, d.df, d.df <= ? AS rare
               FROM ge_q q JOIN ge_bqt t ON t.qid = q.qid JOIN d ON d.term = t.term""",
            [self.RARE_DF],
        )
        self.cur.execute(
            f"""CREATE OR REPLACE TEMP TABLE ge_bw AS
                WITH n AS (SELECT count(*) AS num_docs FROM artifact_text),
                     st AS (SELECT num_docs, (SELECT sum(n) FROM ge_bvocab WHERE kept) / num_docs AS avgdl FROM n),
                     tf AS (SELECT t.term, t.id, d.df, t.tf, t.len FROM ge_btf t
                            JOIN (SELECT DISTINCT term, df FROM ge_bq) d USING (term))
                SELECT tf.term, tf.id, x.subsystem, {_BM25_WEIGHT.format(len="tf.len")} AS w
                FROM tf JOIN artifacts x ON x.id = tf.id, st"""
        )

    def _stopwords(self) -> str:
        """The index's stopword table, as an empty index built with the store's options has
        it, in an attached in-memory database (the store's own database is never written)."""
        self.cur.execute("ATTACH IF NOT EXISTS ':memory:' AS ge_fts")
        if not self.q(
            "SELECT 1 FROM duckdb_schemas() WHERE database_name = 'ge_fts' AND schema_name = 'fts_main_probe'"
        ):
            self.cur.execute("CREATE OR REPLACE TABLE ge_fts.main.probe (id VARCHAR, body VARCHAR)")
            self.cur.execute(f"PRAGMA create_fts_index('ge_fts.main.probe', 'id', 'body', {FTS_OPTIONS})")
        return "ge_fts.fts_main_probe.stopwords"
