"""The SQL of question generation that the graph does not share and every track may use: the
database's settings and the postings of the values subject references show
(``subjects.py``). A track's own queries live in its package (``tracks/perspective/sql.py``).

Every query runs on the generator's :class:`~groundeval.graph.sql.GraphSQL` cursor and
ends in ``ORDER BY``; working sets go to ``ge_*`` temp tables.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..graph.sql import GraphSQL
from ..store.store import release_freed_memory

# --------------------------------------------------------------------------- the database


def event_count(cur: Any) -> int:
    """The events in the store."""
    return cur.execute("SELECT count(*) FROM events").fetchone()[0]


def threads(cur: Any, n: int | None = None) -> int:
    """DuckDB's threads (the database's setting, not the cursor's); ``n``: set to that first."""
    if n is not None:
        cur.execute(f"SET threads = {int(n)}")
    return cur.execute("SELECT current_setting('threads')").fetchone()[0]


# --------------------------------------------------------------------------- names


def pack_names(store: Any) -> dict[str, list[str]]:
    """What a pack names, by kind (sorted): ids, actors and display names, roles, subsystems, event types."""
    q = store.query
    return {
        "event id": [r[0] for r in q("SELECT id FROM events ORDER BY 1")],
        "artifact id": [r[0] for r in q("SELECT id FROM artifacts ORDER BY 1")],
        "actor": [v for r in q("SELECT actor, display_name FROM actors ORDER BY 1") for v in r if v],
        "role": [r[0] for r in q("SELECT role FROM roles ORDER BY 1")],
        "subsystem": [
            r[0]
            for r in q(
                "SELECT DISTINCT subsystem FROM artifacts WHERE subsystem IS NOT NULL "
                "UNION SELECT DISTINCT subsystem FROM grants ORDER BY 1"
            )
        ],
        "event type": [r[0] for r in q("SELECT DISTINCT type FROM events ORDER BY 1")],
    }


# --------------------------------------------------------------------------- subject references
#
# A reference's words are constraints: (kind, key, value) with kind ``f`` (a fact value),
# ``a`` (an artifact reference), ``p`` (an actor's display name, key '') or ``t`` (the
# start of the reference's UTC day, minute or second in µs, key the level). ``ge_post``
# holds, per type group, the events showing each fact, artifact or time constraint a batch
# of subjects may use (``ge_eact`` every event's actors);
# a reference's count is the number of events of its group that show all of its
# constraints. Counts are computed here, never postings shipped to Python: a million-event
# log has actors and days shown by tens of thousands of events. (One query per kind, and
# joins rather than ``IN`` subqueries inside a ``UNION``: DuckDB 1.5.5 could park every
# thread forever on that plan at 1M events.)

# ``ge_want`` holds the values not indexed yet; ``ge_wev`` the events of their groups
# (id, type, group, µs: no raw text). Facts read only the wanted keys, through one JSON
# pointer list per query (``?``: the pointers, ``?``: their keys in the same order), so
# each document is parsed once.
_WANTED_EVENTS = """
    CREATE OR REPLACE TEMP TABLE ge_wev AS
    SELECT e.id, e.type, g.grp, epoch_us(e.ts) AS us FROM events e
    JOIN ge_tgroup g ON g.type = e.type
    JOIN (SELECT DISTINCT grp FROM ge_want WHERE kind IN ('a', 't')) wg ON wg.grp = g.grp"""

# Every event's fact values under the given keys, per type group (``ge_efact``: built by
# ``load_facts`` for every fact key of the log at once, so each document is parsed once per
# generation, through one JSON pointer list — ``?``: the pointers, ``?``: their keys in the
# same order), read by ``_COUNT`` and ``frequencies`` directly. Its rows are distinct as they
# come (event ids are unique, one value per event and key, a list's keys ``list_distinct``):
# no DISTINCT over millions of rows at 1M events.
_FACT_KEYS = """
    SELECT DISTINCT unnest(json_keys(raw, '/facts')) AS key FROM events ORDER BY 1"""

_EVENT_FACTS = """
    INSERT INTO ge_efact
    WITH j AS (SELECT e.id, e.type, g.grp, unnest(json_extract(e.raw, ?)) AS v, unnest(?) AS key FROM events e
               JOIN ge_tgroup g ON g.type = e.type)
    SELECT grp, type, key, unnest(CASE WHEN json_type(v) = 'VARCHAR'
                    THEN [v ->> '$'] ELSE ge_keys_of(v) END) AS val, id
    FROM j WHERE v IS NOT NULL"""

_POST_ARTIFACTS = """
    INSERT INTO ge_post
    SELECT DISTINCT w.grp, e.type, 'a', w.key, w.val, e.id FROM ge_want w
    JOIN event_artifacts ea ON ea.key = w.key AND ea.artifact_id = w.val
    JOIN ge_wev e ON e.id = ea.event_id AND e.grp = w.grp
    WHERE w.kind = 'a'"""

# Every event's actors by the name a reference shows (its display name, else its id), per
# type group: built once, when a first reference may show actors (``load_actors``), and
# read by ``_COUNT`` directly — an actor shown by tens of thousands of events is never
# copied into ``ge_post``. A reference showing other words too is counted among the events
# those words match, each checked for its actors (an actor's posting is read whole only
# for references that show nothing else).
_EVENT_ACTORS = """
    CREATE OR REPLACE TEMP TABLE ge_eact AS
    SELECT DISTINCT g.grp, e.type, coalesce(d.name, a.actor) AS name, e.id
    FROM event_actors a JOIN events e ON e.id = a.event_id JOIN ge_tgroup g ON g.type = e.type
    LEFT JOIN ge_display d ON d.actor = a.actor"""

# the start of the event's day, minute or second (floor division, exact in integers)
_POST_TIME = """
    INSERT INTO ge_post
    SELECT DISTINCT w.grp, e.type, 't', w.key, w.val, e.id FROM ge_wev e
    JOIN ge_want w ON w.kind = 't' AND w.key = ? AND w.grp = e.grp
     AND w.val = (e.us - ((e.us % ?) + ?) % ?)::VARCHAR"""

_COUNT = """
    WITH n AS (SELECT rid, count(*) FILTER (WHERE kind <> 'p') AS nq, count(*) FILTER (WHERE kind = 'p') AS np
               FROM ge_rc GROUP BY rid),
         qhit AS (SELECT c.rid, p.id FROM ge_rc c
                  JOIN ge_post p ON p.grp = c.grp AND p.kind = c.kind AND p.key = c.key AND p.val = c.val
                  UNION ALL
                  SELECT c.rid, p.id FROM ge_rc c JOIN ge_efact p ON p.grp = c.grp AND p.key = c.key AND p.val = c.val
                  WHERE c.kind = 'f'),
         q AS (SELECT h.rid, h.id, any_value(n.np) AS np FROM qhit h JOIN n USING (rid)
               GROUP BY h.rid, h.id HAVING count(*) = any_value(n.nq)),
         qp AS (SELECT q.rid, q.id, count(*) AS m FROM q JOIN ge_rc c ON c.rid = q.rid AND c.kind = 'p'
                JOIN ge_eact p ON p.grp = c.grp AND p.name = c.val AND p.id = q.id GROUP BY q.rid, q.id),
         p AS (SELECT c.rid, p.id FROM ge_rc c JOIN n ON n.rid = c.rid AND n.nq = 0
               JOIN ge_eact p ON p.grp = c.grp AND p.name = c.val WHERE c.kind = 'p'
               GROUP BY c.rid, p.id HAVING count(*) = any_value(n.np)),
         ok AS (SELECT q.rid, q.id FROM q LEFT JOIN qp ON qp.rid = q.rid AND qp.id = q.id
                WHERE q.np = coalesce(qp.m, 0)
                UNION ALL SELECT rid, id FROM p)
    SELECT ok.rid, count(*), bool_or(ok.id = s.subject) FROM ok JOIN ge_rs s ON s.rid = ok.rid
    GROUP BY ok.rid ORDER BY 1"""

_CONSTRAINT = [("grp", "VARCHAR"), ("kind", "VARCHAR"), ("key", "VARCHAR"), ("val", "VARCHAR")]


def start_subjects(gs: GraphSQL, display: dict[str, str], groups: dict[str, str]) -> dict[str, int]:
    """The working tables of one generation's subject references: display names, each
    event type's group (``groups``: type -> group name), the postings (empty). Returns
    the events of each type."""
    gs.put("ge_display", [("actor", "VARCHAR"), ("name", "VARCHAR")], sorted(display.items()))
    gs.put("ge_tgroup", [("type", "VARCHAR"), ("grp", "VARCHAR")], sorted(groups.items()))
    gs.q(
        "CREATE OR REPLACE TEMP TABLE ge_post (grp VARCHAR, type VARCHAR, kind VARCHAR, key VARCHAR,"
        " val VARCHAR, id VARCHAR)"
    )
    gs.q("CREATE OR REPLACE TEMP TABLE ge_eact (grp VARCHAR, type VARCHAR, name VARCHAR, id VARCHAR)")
    gs.q("CREATE OR REPLACE TEMP TABLE ge_efact (grp VARCHAR, type VARCHAR, key VARCHAR, val VARCHAR, id VARCHAR)")
    return dict(gs.q("SELECT type, count(*) FROM events GROUP BY type ORDER BY 1"))


def load_postings(gs: GraphSQL, want: list[tuple[str, str, str, str]], levels: Iterable[tuple[str, int]]) -> None:
    """Add to ``ge_post`` the events of each type group showing each ``(group, kind, key,
    value)`` of ``want`` (values not indexed before; ``levels``: the time levels and their µs)."""
    if not want:
        return
    gs.put("ge_want", _CONSTRAINT, want)
    kinds = {w[1] for w in want}
    if kinds & {"a", "t"}:
        gs.q(_WANTED_EVENTS)
    if "a" in kinds:
        gs.q(_POST_ARTIFACTS)
    for level, size in levels if "t" in kinds else ():
        gs.q(_POST_TIME, [level, size, size, size])
    gs.q("DROP TABLE IF EXISTS ge_wev")  # read by the inserts above only
    release_freed_memory(gs.cur)  # the counts come next, on top of the postings


def fact_keys(gs: GraphSQL) -> list[str]:
    """Every key of any event's ``facts`` object."""
    return [r[0] for r in gs.q(_FACT_KEYS)]


def load_facts(gs: GraphSQL, keys: list[str]) -> None:
    """Add every event's values under ``keys`` (not loaded before) to ``ge_efact``."""
    if keys:
        gs.q(_EVENT_FACTS, [[_pointer("facts", k) for k in keys], keys])


def load_actors(gs: GraphSQL) -> None:
    """``ge_eact``: every event's actors by shown name (once per generation, see ``_EVENT_ACTORS``)."""
    gs.q(_EVENT_ACTORS)


def frequencies(gs: GraphSQL, values: list[tuple[str, str, str, str]]) -> list[tuple]:
    """``(event type, kind, key, value, events of the type showing it)`` for indexed
    ``(group, kind, key, value)`` identifiers."""
    gs.put("ge_want", _CONSTRAINT, values)
    out = gs.q(
        "SELECT p.type, p.kind, p.key, p.val, count(*) FROM ge_post p JOIN ge_want w "
        "ON w.grp = p.grp AND w.kind = p.kind AND w.key = p.key AND w.val = p.val GROUP BY ALL "
        "UNION ALL SELECT p.type, 'f', p.key, p.val, count(*) FROM ge_efact p JOIN ge_want w "
        "ON w.kind = 'f' AND w.grp = p.grp AND w.key = p.key AND w.val = p.val GROUP BY ALL ORDER BY ALL"
    )
    release_freed_memory(gs.cur)  # the counting rounds come next, on top of the postings
    return out


def _pointer(*keys: str) -> str:
    """The JSON pointer (RFC 6901) of nested object keys: any key text is addressable."""
    return "".join("/" + k.replace("~", "~0").replace("/", "~1") for k in keys)


def match_counts(
    gs: GraphSQL, refs: list[tuple[int, str]], constraints: list[tuple[int, str, str, str, str, int]]
) -> dict[int, tuple[int, bool]]:
    """``rid -> (events of its group showing all its constraints, whether its subject is
    one of them)`` for ``refs`` (rid, subject event id) and their ``constraints`` (rid,
    group, kind, key, value, how many the ref has); a ref no event fits is left out."""
    gs.put("ge_rs", [("rid", "INTEGER"), ("subject", "VARCHAR")], refs)
    gs.put("ge_rc", [("rid", "INTEGER"), *_CONSTRAINT, ("n", "INTEGER")], constraints)
    out = {rid: (n, bool(own)) for rid, n, own in gs.q(_COUNT)}
    release_freed_memory(gs.cur)  # its joins' hash tables (~20 MB for a first round at 22.5K events)
    return out
