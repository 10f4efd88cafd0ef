"""All SQL the tool runtime runs (the runtime owns it; the cone it applies is the store's): per-episode gate facts, BM25 search, fetch, context window.

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

import heapq
import json
import math
import re
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..store.cone import GATES, granted_subsystems, roles_at, utc_text

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def epoch_us(t: datetime) -> int:
    """Microseconds since the epoch (naive times are UTC), exact integer arithmetic."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    d = t - _EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


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
    broadcast_types: list[str] = field(default_factory=list)

    def broken(
        self,
        artifact_id: str,
        subsystem: str,
        created_us: int | None,
        restricted: bool,
        gates: tuple[str, ...] | None = None,
    ) -> list[str]:
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
    broadcast = (
        [
            r[0]
            for r in store.query(
                """SELECT DISTINCT ea.artifact_id
           FROM broadcasts b JOIN events e ON e.type = b.event_type
           JOIN event_artifacts ea ON ea.event_id = e.id
           WHERE list_contains(?::VARCHAR[], b.role) AND e.ts <= ?::TIMESTAMPTZ
           ORDER BY 1""",
                [roles, t],
            )
        ]
        if roles
        else []
    )
    allowed = (
        [
            r[0]
            for r in store.query(
                """SELECT DISTINCT artifact_id FROM artifact_visibility
           WHERE (kind = 'actor' AND principal = ?) OR (kind = 'role' AND list_contains(?::VARCHAR[], principal))
           ORDER BY 1""",
                [actor, roles],
            )
        ]
        if actor
        else []
    )
    btypes = (
        [
            r[0]
            for r in store.query(
                "SELECT DISTINCT event_type FROM broadcasts WHERE list_contains(?::VARCHAR[], role) ORDER BY 1", [roles]
            )
        ]
        if roles
        else []
    )
    wanted = tuple(g for g in GATES if g in set(gates))
    return Scope(
        actor=actor,
        as_of=as_of,
        as_of_us=epoch_us(as_of),
        gates=wanted,
        roles=tuple(roles),
        granted=frozenset(granted),
        broadcast_ids=frozenset(broadcast),
        allowed_restricted=frozenset(allowed),
        granted_list=granted,
        broadcast_list=broadcast,
        allowed_list=allowed,
        broadcast_types=btypes,
    )


# ---------------------------------------------------------------------------- fetch index


@dataclass(frozen=True, slots=True)
class ArtifactMeta:
    subsystem: str
    created_us: int | None
    restricted: bool


Event = tuple[int, str, str, tuple[str, ...]]  # (ts_us, event id, type, actors)

# The referencing events of every artifact, by artifact then time: what a fetch lists.
_EVENTS_SQL = """SELECT DISTINCT ea.artifact_id, epoch_us(e.ts) AS t, e.id AS event_id, e.type,
                        coalesce(json_extract_string(e.raw, '$.actors[*]'), []) AS actors
                 FROM event_artifacts ea JOIN events e ON e.id = ea.event_id"""


class FetchIndex:
    """Gate-relevant metadata of every artifact, loaded once per store, and its referencing events.

    A fetch then needs one dictionary lookup to decide its gates, and — only when the
    fetch is allowed — the body: kept in memory too when the corpus is small enough
    (``RAW_CACHE_BYTES``), else one point query, whose cost is DuckDB's per-query
    overhead rather than the data. The events likewise: in memory up to
    ``EVENTS_IN_MEMORY`` references, else read per allowed fetch from a table sorted by
    artifact (``fetch_events``, built once: at a million events, turning every reference
    into Python objects cost ~9 s of the ~15 s this index took, for a few hundred fetches).
    """

    RAW_CACHE_BYTES = 64 * 1024 * 1024
    EVENTS_IN_MEMORY = 250_000

    def __init__(self, store):
        self._store = weakref.ref(store)  # the index is cached per store: no strong cycle back to it
        total = store.query("SELECT coalesce(sum(length(raw::VARCHAR)), 0) FROM artifacts")[0][0]
        self.raw: dict[str, str] | None = None
        raw_col = "raw::VARCHAR" if total <= self.RAW_CACHE_BYTES else "NULL"
        meta_rows = store.query(
            f"SELECT id, subsystem, epoch_us(created), coalesce(restricted, false), {raw_col}"
            " FROM artifacts ORDER BY id"
        )
        self.meta: dict[str, ArtifactMeta] = {
            aid: ArtifactMeta(sub, created, bool(restricted)) for aid, sub, created, restricted, _raw in meta_rows
        }
        if total <= self.RAW_CACHE_BYTES:
            self.raw = {row[0]: row[4] for row in meta_rows}
        del meta_rows
        self._events: dict[str, tuple[Event, ...]] | None = None
        references = store.query("SELECT count(*) FROM event_artifacts")[0][0]
        if references > self.EVENTS_IN_MEMORY and _events_table(store):
            return
        events: dict[str, list[Event]] = {}
        for aid, t, eid, etype, actors in store.query(_EVENTS_SQL + " ORDER BY artifact_id, t, event_id"):
            events.setdefault(aid, []).append((t, eid, etype, tuple(actors)))
        self._events = {aid: tuple(evs) for aid, evs in events.items()}

    def events(self, artifact_id: str) -> tuple[Event, ...]:
        """The events referencing the artifact, by time then id."""
        if self._events is not None:
            return self._events.get(artifact_id, ())
        rows = self._store().query(
            "SELECT t, event_id, type, actors FROM fetch_events WHERE artifact_id = ? ORDER BY t, event_id",
            [artifact_id],
        )
        return tuple((t, eid, etype, tuple(actors)) for t, eid, etype, actors in rows)

    def record(self, artifact_id: str) -> dict[str, Any] | None:
        """The artifact's stored JSON record (a fresh dict)."""
        if self.raw is not None:
            text = self.raw.get(artifact_id)
        else:
            row = self._store().query("SELECT raw::VARCHAR FROM artifacts WHERE id = ?", [artifact_id])
            text = row[0][0] if row else None
        return json.loads(text) if text is not None else None


def _events_table(store) -> bool:
    """Build ``fetch_events`` (sorted by artifact, so a point query reads one row group) unless
    it exists; False when the store cannot (read-only and the table not in its file)."""
    try:
        store.cursor.execute(
            f"CREATE TABLE IF NOT EXISTS fetch_events AS {_EVENTS_SQL} ORDER BY artifact_id, t, event_id"
        )
        return True
    except Exception:  # noqa: BLE001 - read-only: the events are then kept in memory
        return bool(store.query("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'fetch_events'")[0][0])


_INDEXES: "weakref.WeakKeyDictionary[Any, FetchIndex]" = weakref.WeakKeyDictionary()
_INDEX_LOCK = threading.Lock()


def _per_store(cache: "weakref.WeakKeyDictionary", lock: threading.Lock, store, build):
    """``cache[store]``, built once by ``build(store)`` even when threads race for it."""
    value = cache.get(store)
    if value is None:
        with lock:
            value = cache.get(store)
            if value is None:
                value = cache[store] = build(store)
    return value


def fetch_index(store) -> FetchIndex:
    """The store's :class:`FetchIndex`, built on first use (thread-safe)."""
    return _per_store(_INDEXES, _INDEX_LOCK, store, FetchIndex)


# ---------------------------------------------------------------------------- gate filters


def _gate_filter(scope: Scope, params: list[Any], *, horizon: bool, alias: str = "a", id_in=None) -> list[str]:
    """WHERE fragments (over ``alias`` with columns created, subsystem, restricted) enforcing
    the scope's gates in SQL; ``id_in(ids, params)`` renders "this row's artifact is one of ids".

    Fragments are fixed text; the facts go in as parameters."""
    id_in = id_in or _id_in
    a = alias
    parts = []
    if horizon or "horizon" in scope.gates:
        parts.append(f"{a}.created <= ?::TIMESTAMPTZ")
        params.append(utc_text(scope.as_of))
    if "subsystem" in scope.gates:
        params.append(scope.granted_list)
        if scope.broadcast_list:
            parts.append(f"(list_contains(?::VARCHAR[], {a}.subsystem) OR {id_in(scope.broadcast_list, params)})")
        else:
            parts.append(f"list_contains(?::VARCHAR[], {a}.subsystem)")
    if "actor" in scope.gates:
        if scope.allowed_list:
            parts.append(f"(NOT coalesce({a}.restricted, false) OR {id_in(scope.allowed_list, params)})")
        else:
            parts.append(f"NOT coalesce({a}.restricted, false)")
    return parts


_SEP = "\x1f"


def _id_in(ids: list[str], params: list[Any]) -> str:
    """``a.id IN <ids>`` as a hash semi-join. Binding a Python list costs ~0.1 ms per
    element, so the ids travel as one separator-joined string split inside DuckDB."""
    if any(_SEP in i for i in ids):
        params.append(ids)
        return "a.id IN (SELECT unnest(?::VARCHAR[]))"
    params.append(_SEP.join(ids))
    return "a.id IN (SELECT unnest(string_split(?, chr(31))))"


# ---------------------------------------------------------------------------- search

_SEARCH_LOCK = threading.Lock()
_SEARCH_READY: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()

# BM25 as DuckDB's match_bm25 computes it (k1 = 1.2, b = 0.75, log10 idf), except that
# every corpus statistic — the number of documents, their average length and each term's
# document frequency — is taken over the documents the caller may see (the scope's gates),
# never over the whole corpus: otherwise the order of visible hits would move with the words
# of gated documents. Over two companion tables of the FTS index: postings sorted by term (so
# a query reads only its terms' row groups), each with its term frequency, its document's
# length and the document's gate columns, and the same gate columns per document (for the
# scope's count and average length, computed once per scope).
_K1, _B = 1.2, 0.75

# Scores are summed as integers of 1e-9: DuckDB's parallel ``sum`` over doubles is not
# order-fixed in the last bit, so equal scores could tie or not from run to run; an
# integer sum is exact, so ties (broken by id) are the same on every run.
SCORE_SCALE = 1_000_000_000


def _sql_text(value: str) -> str:
    """A string literal for DDL built from the store's own data (never agent text)."""
    return "'" + value.replace("'", "''") + "'"


def bm25_part_sql(num_docs: str, df: str, tf: str, dl: str, avgdl: str) -> str:
    """One posting's BM25 contribution as a fixed-point integer (SQL over the given columns or
    parameters): ``num_docs``, ``df`` and ``avgdl`` are the statistics of the visible set."""
    idf = f"log((({num_docs} - {df} + 0.5) / ({df} + 0.5)) + 1)"
    norm = f"({_K1} * ((1 - {_B}) + {_B} * ({dl} / {avgdl})))"
    return f"round({idf} * ({tf} * {_K1 + 1}) / ({tf} + {norm}) * {SCORE_SCALE})::BIGINT"


_TABLES = ("search_docs", "search_vis_v2", "search_bc_types_v2", "search_postings_v3", "search_gates_v3")


def ensure_search_tables(store) -> bool:
    """Build the companion tables once per database; False when the store is read-only and its file
    does not hold them already (``groundeval.distributed`` builds them in before opening it read-only).

    ``search_docs`` holds, per document, what the cone needs to decide it for any (actor,
    as-of) — subsystem, creation time, restriction with its principals (``vis``), the
    first time each broadcast event type referenced it (``bc``) — and its display columns.
    ``search_gates_v3`` (one row per document) and ``search_postings_v3`` (one per term and
    document, sorted by term) copy the gate facts as scalars only — list columns cost ~0.3 ms
    per scan to read even for a few rows: creation time in µs, an id of the document's
    principal set (``search_vis_v2``; 0 = unrestricted) and one column per broadcast event
    type (``search_bc_types_v2``) — beside the document's length (``dl``) and, in a posting,
    the term's frequency in it (``tf``). The gates then filter both in SQL with a handful of
    small parameters, and the statistics are counted over what passes."""
    if store in _SEARCH_READY:
        return _SEARCH_READY[store]
    store.ensure_fts()
    with _SEARCH_LOCK:
        if store in _SEARCH_READY:
            return _SEARCH_READY[store]
        con = store.con
        try:
            con.execute("""CREATE TABLE IF NOT EXISTS search_docs AS
                WITH vis AS (SELECT artifact_id, list(kind || chr(31) || principal ORDER BY kind, principal) AS vis
                             FROM artifact_visibility GROUP BY artifact_id),
                bc AS (SELECT artifact_id, list({'t': type, 'ts': ts} ORDER BY type) AS bc FROM (
                           SELECT ea.artifact_id, e.type, min(epoch_us(e.ts)) AS ts
                           FROM event_artifacts ea JOIN events e ON e.id = ea.event_id
                           WHERE e.type IN (SELECT event_type FROM broadcasts)
                           GROUP BY ea.artifact_id, e.type) GROUP BY artifact_id)
                SELECT dc.docid, a.id, a.subsystem, a.created, coalesce(a.restricted, false) AS restricted,
                       coalesce(vis.vis, []) AS vis, coalesce(bc.bc, []) AS bc,
                       a.title, a.actors, left(x.body, 600) AS head
                FROM fts_main_artifact_text.docs dc JOIN artifacts a ON a.id = dc.name
                JOIN artifact_text x ON x.id = a.id
                LEFT JOIN vis ON vis.artifact_id = a.id LEFT JOIN bc ON bc.artifact_id = a.id
                ORDER BY dc.docid""")
            con.execute("CREATE INDEX IF NOT EXISTS search_docs_docid ON search_docs (docid)")
            # distinct principal sets of restricted documents: an episode decides each set once
            con.execute("""CREATE TABLE IF NOT EXISTS search_vis_v2 AS
                SELECT (row_number() OVER (ORDER BY vis))::INTEGER AS vis_id, vis
                FROM (SELECT DISTINCT vis FROM search_docs WHERE restricted) ORDER BY vis_id""")
            # one column per broadcast event type: the first time it referenced the document
            con.execute("""CREATE TABLE IF NOT EXISTS search_bc_types_v2 AS
                SELECT (row_number() OVER (ORDER BY event_type) - 1)::INTEGER AS col, event_type
                FROM (SELECT DISTINCT event_type FROM broadcasts) ORDER BY col""")
            bc_cols = "".join(
                f", list_extract(list_filter(d.bc, x -> x.t = {_sql_text(etype)}), 1).ts AS bc_{col}"
                for col, etype in con.execute("SELECT col, event_type FROM search_bc_types_v2 ORDER BY col").fetchall()
            )
            con.execute(f"""CREATE TABLE IF NOT EXISTS search_gates_v3 AS
                SELECT d.docid, dc.len::INTEGER AS dl, d.subsystem, epoch_us(d.created) AS created_us,
                       CASE WHEN d.restricted THEN v.vis_id ELSE 0 END AS vis_id{bc_cols}
                FROM search_docs d JOIN fts_main_artifact_text.docs dc ON dc.docid = d.docid
                LEFT JOIN search_vis_v2 v ON v.vis = d.vis
                ORDER BY d.docid""")
            gate_cols = ["dl", "subsystem", "created_us", "vis_id"] + [
                f"bc_{col}" for (col,) in con.execute("SELECT col FROM search_bc_types_v2 ORDER BY col").fetchall()
            ]
            con.execute(f"""CREATE TABLE IF NOT EXISTS search_postings_v3 AS
                SELECT t.termid, t.docid, count(*)::INTEGER AS tf{"".join(f", any_value(g.{c}) AS {c}" for c in gate_cols)}
                FROM fts_main_artifact_text.terms t JOIN search_gates_v3 g ON g.docid = t.docid
                GROUP BY t.termid, t.docid ORDER BY t.termid, t.docid""")
            ready = True
        except Exception:  # read-only: use the tables when they were built into the file, else rank
            # with the index tables directly
            ready = con.execute(
                "SELECT count(DISTINCT table_name) FROM duckdb_tables() WHERE list_contains(?, table_name)",
                [list(_TABLES)],
            ).fetchone()[0] == len(_TABLES)
        _SEARCH_READY[store] = ready
        return ready


def _postings_gate_filter(scope: Scope, idx: "TermIndex", params: list[Any]) -> list[str]:
    """The cone over ``search_postings_v3`` or ``search_gates_v3`` rows (alias ``p``): same
    three gates, scalar columns only, decided by a few small parameters."""
    parts = []
    if "horizon" in scope.gates:
        parts.append("p.created_us <= ?")
        params.append(scope.as_of_us)
    if "subsystem" in scope.gates:
        params.append(scope.granted_list)
        cols = sorted(idx.bc_cols[t] for t in scope.broadcast_types if t in idx.bc_cols)
        parts.append(
            "(" + " OR ".join(["list_contains(?::VARCHAR[], p.subsystem)"] + [f"p.bc_{c} <= ?" for c in cols]) + ")"
        )
        params += [scope.as_of_us] * len(cols)
    if "actor" in scope.gates:
        allowed = idx.allowed_vis(scope)
        if not allowed:
            parts.append("p.vis_id = 0")
        elif len(allowed) <= _MAX_LIST_PARAM:
            parts.append("(p.vis_id = 0 OR list_contains(?::INTEGER[], p.vis_id))")
            params.append(allowed)
        else:  # binding a list costs ~0.1 ms per element: one string, split once
            parts.append("(p.vis_id = 0 OR list_contains(string_split(?, ',')::INTEGER[], p.vis_id))")
            params.append(",".join(map(str, allowed)))
    return parts


_MAX_LIST_PARAM = 8


def _frozen(value: Any) -> Any:
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


class TermIndex:
    """The BM25 index's term dictionary in memory (term → termid), loaded once per store.

    A search then turns its words into termids without SQL: the query is tokenized in
    Python exactly as the index's ``tokenize`` macro does for ASCII text (lower case,
    ``(\\.|[^a-z0-9])+`` → space, split), other text by the macro itself, and each word's
    Porter stem is memoised in a bounded, lock-protected LRU (``MAX_MEMO`` words; unseen
    words are stemmed by one ``stem()`` query, least recently used ones evicted): it is
    shared by every episode on the store and never fails, whatever the vocabulary.

    It also keeps the broadcast columns of the postings, which principal sets each
    (actor, roles) may see, each scope's visible count and average length (bounded:
    ``MAX_SCOPES``), and — for corpora under ``DISPLAY_CACHE_BYTES`` — the hits' display
    columns, so a search is one ranking query without a join."""

    MAX_MEMO = 100_000
    MAX_SCOPES = 4096
    DISPLAY_CACHE_BYTES = 64 * 1024 * 1024

    def __init__(self, store):
        self.terms: dict[str, int] = {}
        self.corpus_df: dict[int, int] = {}  # whole-corpus document frequency: only to pick a query plan
        for term, termid, df in store.query("SELECT term, termid, df FROM fts_main_artifact_text.dict ORDER BY termid"):
            self.terms[term] = termid
            self.corpus_df[termid] = df
        # ranking breaks ties by docid in SQL, which equals the artifact-id order only if
        # the index numbered the documents in id order; otherwise searches take the slow path
        self.docids_in_id_order = (
            store.query(
                "SELECT count(*) FROM (SELECT docid, row_number() OVER (ORDER BY docid) AS a,"
                " row_number() OVER (ORDER BY name) AS b FROM fts_main_artifact_text.docs) WHERE a <> b"
            )[0][0]
            == 0
        )
        self.bc_cols: dict[str, int] = dict(
            (t, c) for c, t in store.query("SELECT col, event_type FROM search_bc_types_v2 ORDER BY col")
        )
        self._vis_sets = [
            (vid, frozenset(vis)) for vid, vis in store.query("SELECT vis_id, vis FROM search_vis_v2 ORDER BY vis_id")
        ]
        self._allowed: dict[tuple, list[int]] = {}
        self._stats: OrderedDict[tuple, tuple[int, float]] = OrderedDict()
        self._stats_lock = threading.Lock()
        size = store.query(
            "SELECT coalesce(sum(length(id) + length(coalesce(title, '')) + length(coalesce(head, ''))"
            " + 64), 0) FROM search_docs"
        )[0][0]
        self.display: dict[int, tuple] | None = None
        if size <= self.DISPLAY_CACHE_BYTES:
            self.display = {
                row[0]: row[1:]
                for row in store.query(
                    "SELECT docid, id, subsystem, epoch_us(created), title, actors, head FROM search_docs ORDER BY docid"
                )
            }
        self._stems: OrderedDict[str, str] = OrderedDict()
        self._stems_lock = threading.Lock()

    def allowed_vis(self, scope: Scope) -> list[int]:
        """Principal-set ids (sorted) naming the scope's actor or one of its roles."""
        key = (scope.actor, scope.roles)
        out = self._allowed.get(key)
        if out is None:
            mine = ({f"actor{_SEP}{scope.actor}"} if scope.actor else set()) | {f"role{_SEP}{r}" for r in scope.roles}
            out = self._allowed[key] = [vid for vid, vis in self._vis_sets if vis & mine]
        return out

    def visible_stats(self, store, scope: Scope) -> tuple[int, float]:
        """(number, average length) of the documents inside the scope's gates: one scan of
        ``search_gates_v3`` per distinct gate filter, remembered (LRU of ``MAX_SCOPES``)."""
        params: list[Any] = []
        where = " AND ".join(_postings_gate_filter(scope, self, params)) or "true"
        key = (where, _frozen(params))
        with self._stats_lock:
            found = self._stats.get(key)
            if found is not None:
                self._stats.move_to_end(key)
                return found
        n, avgdl = store.query(f"SELECT count(*), coalesce(avg(p.dl), 0) FROM search_gates_v3 p WHERE {where}", params)[
            0
        ]
        with self._stats_lock:
            self._stats[key] = (n, avgdl)
            while len(self._stats) > self.MAX_SCOPES:
                self._stats.popitem(last=False)
        return n, avgdl

    def corpus_postings(self, terms: list[int]) -> int:
        """How many postings the terms have in the whole corpus (an upper bound of a search's rows)."""
        return sum(self.corpus_df[t] for t in terms)

    def words(self, store, query: str) -> list[str]:
        if query.isascii():
            return _ASCII_SEP.sub(" ", query.lower()).split(" ")
        return store.query("SELECT fts_main_artifact_text.tokenize(?)", [query])[0][0]

    def stems(self, store, words: set[str]) -> dict[str, str]:
        """Each word's Porter stem: from the LRU memo, the unseen ones by one query."""
        found: dict[str, str] = {}
        with self._stems_lock:
            memo = self._stems
            for w in words:
                stem = memo.get(w)
                if stem is not None:
                    memo.move_to_end(w)
                    found[w] = stem
        unseen = sorted(w for w in words if w not in found)
        if unseen:
            fresh = dict(store.query("SELECT w, stem(w, 'porter') FROM unnest(?::VARCHAR[]) AS t(w)", [unseen]))
            found.update(fresh)
            with self._stems_lock:
                memo = self._stems
                for w in unseen[-self.MAX_MEMO :]:
                    memo[w] = fresh.get(w)
                    memo.move_to_end(w)
                while len(memo) > self.MAX_MEMO:
                    memo.popitem(last=False)
        return found

    def query_terms(self, store, query: str) -> list[int]:
        """The termids of the query's distinct stems that the index knows, sorted."""
        stems = set(self.stems(store, set(self.words(store, query))).values())
        return sorted(self.terms[t] for t in stems if t in self.terms)


_ASCII_SEP = re.compile(r"(\.|[^a-z0-9])+")
_TERM_INDEXES: "weakref.WeakKeyDictionary[Any, TermIndex]" = weakref.WeakKeyDictionary()

# up to this many query terms, each term's postings are read by its own equality scan
# (DuckDB filters inside the scan, reading only that term's rows); beyond, one scan
# with a list filter (it reads every column of the row groups it cannot skip)
_MAX_TERM_SCANS = 8


def term_index(store) -> TermIndex | None:
    """The store's :class:`TermIndex` once its search tables exist, else None."""
    if not ensure_search_tables(store):
        return None
    return _per_store(_TERM_INDEXES, _SEARCH_LOCK, store, TermIndex)


def prepare(store) -> None:
    """Build what the episodes' searches and fetches read — the BM25 index, the search tables,
    the term and fetch indexes — ahead of the first episode (``evaluate`` does it while the
    verifier checks the pack); whatever is not built here is built on first use."""
    term_index(store)
    fetch_index(store)


def search_rows(store, scope: Scope, query: str, subsystem: str | None, limit: int) -> list[tuple]:
    """BM25-ranked artifacts inside the scope's gates, with the statistics of the documents
    inside them: ``(id, subsystem, created_us, title, actors, body_head)``, best first, ties
    by id. The query text is a parameter."""
    idx = term_index(store)
    if idx is not None and idx.docids_in_id_order:
        return _ranked_postings(store, scope, idx, idx.query_terms(store, query), subsystem, limit)
    return _ranked_index_tables(store, scope, query, subsystem, limit)


def _ranked_postings(
    store, scope: Scope, idx: TermIndex, terms: list[int], subsystem: str | None, limit: int
) -> list[tuple]:
    """The terms' postings inside the gates, each term's document frequency counted over them,
    the postings' BM25 parts (of the visible count and average length) summed per document —
    of ``subsystem`` only when named —, the best ``limit`` (ties by docid = id order), with
    display columns from memory or a join.

    Up to ``PYTHON_POSTINGS`` postings in the corpus (the terms' whole-corpus document
    frequencies, an upper bound of the rows), the visible postings are read and scored in
    Python (:func:`_python_scores`): DuckDB's window and arithmetic operators cost more than
    the few hundred rows of a typical query (22.5K pack: 2.6 -> 1.6 ms). Beyond, one SQL
    query does it all. Both compute the same fixed-point parts in the same operation order,
    so they rank alike to the last bit (tested)."""
    if not terms:
        return []
    num_docs, avgdl = idx.visible_stats(store, scope)
    cols = (
        "SELECT termid, docid, tf, dl, subsystem, created_us, vis_id"
        + "".join(f", bc_{c}" for c in sorted(idx.bc_cols.values()))
        + " FROM search_postings_v3"
    )
    if len(terms) <= _MAX_TERM_SCANS:
        postings = " UNION ALL ".join([f"{cols} WHERE termid = ?"] * len(terms))
        params: list[Any] = list(terms)
    else:
        postings = f"{cols} WHERE list_contains(?::BIGINT[], termid)"
        params = [terms]
    where = " AND ".join(_postings_gate_filter(scope, idx, params)) or "true"
    if idx.corpus_postings(terms) <= PYTHON_POSTINGS:
        keep = "true"
        if subsystem is not None:
            keep = "subsystem = ?"
            params = [subsystem, *params]  # first in the text
        rows = store.query(f"SELECT termid, docid, tf, dl, {keep} FROM ({postings}) p WHERE {where}", params)
        top = _python_scores(rows, num_docs, avgdl, limit)
    else:
        part = bm25_part_sql("?::BIGINT", "df", "tf::DOUBLE", "dl", "?::DOUBLE")
        params = [num_docs, avgdl, *params]  # the part's parameters come first in the text
        outer = ""
        if subsystem is not None:
            outer = "WHERE subsystem = ?"
            params.append(subsystem)
        params.append(limit)
        top = store.query(
            f"""SELECT docid, sum({part}) AS score
            FROM (SELECT docid, tf, dl, subsystem, count(*) OVER (PARTITION BY termid) AS df
                  FROM ({postings}) p WHERE {where}) {outer}
            GROUP BY docid ORDER BY score DESC, docid LIMIT ?""",
            params,
        )
    if idx.display is not None:
        return [idx.display[docid] for docid, _score in top]
    found = {
        row[0]: row[1:]
        for row in store.query(
            "SELECT docid, id, subsystem, epoch_us(created), title, actors, head FROM search_docs"
            " WHERE docid IN (SELECT unnest(?::BIGINT[]))",
            [[docid for docid, _score in top]],
        )
    }
    return [found[docid] for docid, _score in top]


# below this many postings of the query's terms in the whole corpus, scoring is done in Python
PYTHON_POSTINGS = 20_000


def _python_scores(rows: list[tuple], num_docs: int, avgdl: float, limit: int) -> list[tuple[int, int]]:
    """``(docid, score)`` of the best ``limit`` documents, from visible postings ``(termid,
    docid, tf, dl, keep)``: BM25 as :func:`bm25_part_sql` writes it, operation for operation
    (IEEE doubles either way; SQL's ``round`` is half away from zero), each part a fixed-point
    integer, summed exactly; only ``keep`` rows score, every row counts in document frequency."""
    df: dict[int, int] = {}
    for row in rows:
        df[row[0]] = df.get(row[0], 0) + 1
    idf = {t: math.log10(((num_docs - c + 0.5) / (c + 0.5)) + 1) for t, c in df.items()}
    k1p1, k1, b = _K1 + 1, _K1, _B
    scores: dict[int, int] = {}
    for termid, docid, tf, dl, keep in rows:
        if not keep:
            continue
        x = idf[termid] * (tf * k1p1) / (tf + (k1 * ((1 - b) + b * (dl / avgdl)))) * SCORE_SCALE
        whole = math.floor(x)
        scores[docid] = scores.get(docid, 0) + (whole + 1 if x - whole >= 0.5 else whole)
    return heapq.nsmallest(limit, scores.items(), key=lambda kv: (-kv[1], kv[0]))


def _ranked_index_tables(store, scope: Scope, query: str, subsystem: str | None, limit: int) -> list[tuple]:
    """The same ranking straight from the FTS index tables (read-only stores without the
    companion tables); the gates filter the artifacts table, and the statistics are counted
    over the documents that pass them."""
    params: list[Any] = []
    where = _gate_filter(scope, params, horizon=False)
    params.append(query)
    outer = ""
    if subsystem is not None:
        outer = "WHERE a.subsystem = ?"
        params.append(subsystem)
    params.append(limit)
    part = bm25_part_sql("st.num_docs", "df.df", "tf.tf::DOUBLE", "vis.len", "st.avgdl")
    sql = f"""WITH vis AS (
            SELECT dc.docid, dc.len FROM fts_main_artifact_text.docs dc JOIN artifacts a ON a.id = dc.name
            WHERE {" AND ".join(where) or "true"}),
        st AS (SELECT count(*) AS num_docs, coalesce(avg(len), 0) AS avgdl FROM vis),
        q AS (SELECT d.termid FROM fts_main_artifact_text.dict d
              WHERE d.term IN (SELECT DISTINCT stem(unnest(fts_main_artifact_text.tokenize(?)), 'porter'))),
        tf AS (SELECT t.docid, t.termid, count(*) AS tf FROM fts_main_artifact_text.terms t
               WHERE t.termid IN (SELECT termid FROM q) AND t.docid IN (SELECT docid FROM vis)
               GROUP BY t.docid, t.termid),
        df AS (SELECT termid, count(*) AS df FROM tf GROUP BY termid),
        s AS (SELECT tf.docid, sum({part}) AS score
              FROM tf JOIN df ON df.termid = tf.termid JOIN vis ON vis.docid = tf.docid, st GROUP BY tf.docid)
        SELECT a.id, a.subsystem, epoch_us(a.created), a.title, a.actors, left(x.body, 600)
        FROM s JOIN fts_main_artifact_text.docs dc ON dc.docid = s.docid JOIN artifacts a ON a.id = dc.name
        JOIN artifact_text x ON x.id = a.id
        {outer}
        ORDER BY s.score DESC, a.id LIMIT ?"""
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
            FROM artifacts a WHERE {" AND ".join(where) or "true"}
        ) WHERE used <= ?
        ORDER BY created DESC, id"""
    return store.query(sql, params)
