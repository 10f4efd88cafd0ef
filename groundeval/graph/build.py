"""Build the event graph from a loaded store with set-based SQL (``graph/sql.py``).

Definitions (the differential test checks them against a brute-force reference):

* **Causal edge** (per :class:`CausalLinkSpec`): a cause event (of the cause type,
  passing ``match_field``/``match_value``) links to the earliest effect-type event
  (by time, then id) strictly after it and at most ``max_gap_days`` later on which
  every join holds (key sets intersect; see ``graph/sql.py`` for how values compare).
  A spec without joins links to the earliest effect in the gap. Effects reached by
  two or more causes (any spec) are marked ``multi_cause``.
* **Distractor**: the very next effect-type event after a cause (by time, then id)
  inside the gap, when both sides resolve every join path but some join fails and
  the pair is not a causal edge of any spec. Ground truth: no causal link.
* **Silence**: for each trigger (type + match filter), joined responses are found at
  any time. Missing trigger join key → ambiguous ``missing_join_key``; a joined
  response strictly after it within the gap → ``presence`` (a response answering
  several triggers of one spec is kept once, for its earliest trigger); else a joined
  response at or before the trigger → ambiguous ``response_before_trigger``; else
  one after the gap → ambiguous ``response_outside_gap``; else ``absence``.
"""

from __future__ import annotations

import json
import re
from operator import itemgetter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from ..contract.paths import join_key, json_paths, render_template, resolve
from ..store.store import Store, iso, release_freed_memory, to_utc
from .records import AmbiguousTrigger, CausalEdge, Distractor, SilenceRecord
from .sql import GraphSQL, gap_us

if TYPE_CHECKING:
    import networkx as nx  # imported when a caller asks for the view: generation does not


@dataclass
class EventInfo:
    id: str
    type: str
    ts_us: int
    raw: str
    actors: list[str]
    artifacts: list[str]
    subsystems: list[str]
    max_created_us: int | None
    _record: dict[str, Any] | None = None

    @property
    def record(self) -> dict[str, Any]:
        """The raw event, parsed on first use (most events never need it)."""
        if self._record is None:
            self._record = json.loads(self.raw)
        return self._record


class EventIndex(Mapping[str, EventInfo]):
    """The events the graph's records involve, fetched from the store on demand.

    Most callers need a few hundred of them (the sampled pools), so nothing is read
    while the graph is built: :meth:`load` fetches a batch, and the first lookup of an
    id not loaded yet fetches every involved event at once (one query, not one per id)."""

    def __init__(self, gs: GraphSQL | None, ids: Callable[[], set[str]]):
        self._gs, self._ids_of, self._ids = gs, ids, None
        self._loaded: dict[str, EventInfo] = {}

    @property
    def ids(self) -> set[str]:
        if self._ids is None:
            self._ids = self._ids_of()
        return self._ids

    def load(self, ids: Iterable[str]) -> None:
        """Fetch these events (those not loaded yet) in one query."""
        missing = {i for i in ids if i not in self._loaded}
        if missing and self._gs is not None:
            for r in self._gs.events_info(missing):
                self._loaded[r[0]] = EventInfo(r[0], r[1], r[2], r[3], list(r[4]), list(r[5]), list(r[6]), r[7])

    def __getitem__(self, eid: str) -> EventInfo:
        if eid not in self._loaded and eid in self.ids:
            self.load(self.ids)
        return self._loaded[eid]

    def __contains__(self, eid: object) -> bool:
        return eid in self.ids

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.ids))

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class EventGraph:
    """Deterministically sorted records plus their networkx view (built on first use)."""

    causal_edges: list[CausalEdge]
    distractors: list[Distractor]
    absences: list[SilenceRecord]
    presences: list[SilenceRecord]
    ambiguous: list[AmbiguousTrigger]
    events: Mapping[str, EventInfo] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    _graph: nx.MultiDiGraph | None = field(default=None, repr=False)

    @property
    def graph(self) -> nx.MultiDiGraph:
        """Events as nodes; ``causal``, ``distractor`` and ``response`` edges keyed by spec."""
        if self._graph is None:
            self._graph = _networkx(self.events, self.causal_edges, self.distractors, self.presences, self.absences)
        return self._graph


def _define(
    prefix: str,
    kind: str,
    src_type: str,
    dst_type: str,
    joins: list[tuple[str, str]],
    match_field: str | None,
    match_value: Any,
    gap: int,
    defs: dict[str, list],
) -> None:
    """Append one spec's rows to the definition tables ``GraphSQL.load`` takes."""
    pairs = joins or [(None, None)]  # no join: one constant key on both sides
    for j, (pa, pb) in enumerate(pairs):
        defs["sides"] += [(f"{prefix}.{j}a", src_type, pa), (f"{prefix}.{j}b", dst_type, pb)]
        defs["joins"].append((prefix, j, f"{prefix}.{j}a", f"{prefix}.{j}b"))
    match_side = ""
    if match_field:
        match_side = f"{prefix}.m"
        defs["sides"].append((match_side, src_type, match_field))
        if match_value is not None:
            defs["matches"] += [(prefix, k) for k in sorted(join_key(match_value))]
    defs["sources"].append((prefix, src_type, match_side, bool(match_field) and match_value is None))
    defs["specs"].append((prefix, kind, dst_type, gap, len(pairs), bool(joins)))


def build_graph(store: Store, *, search_spaces: bool = True) -> EventGraph:
    """Derive causal edges, distractors and silence records; see the module docstring."""
    ev = store.manifest.evaluation
    if search_spaces and needs_fts(store):
        store.ensure_fts()  # first: loading the extension replaces the thread's cursor
    gs = GraphSQL(store.cursor)
    gs.load(**_definitions(ev))

    names = [s.name for s in ev.causal_links]
    raw_edges = _by_spec(gs.causal_edges(), names)
    linked = {(c, e) for _, c, e, _, _ in raw_edges}
    raw_distractors = [r for r in _by_spec(gs.next_effects(), names) if (r[1], r[2]) not in linked]
    presences_raw, absences_raw, ambiguous = _silence_status(gs, ev)
    kept, duplicates = _first_triggers(presences_raw)

    causes_of: dict[str, set[str]] = {}
    for _, c, e, _, _ in raw_edges:
        causes_of.setdefault(e, set()).add(c)
    types = {s.name: (s.cause_event_type, s.effect_event_type) for s in ev.causal_links}
    edges = [CausalEdge(n, c, e, *types[n], cts, ets, len(causes_of[e]) > 1) for n, c, e, cts, ets in raw_edges]
    distractors = [Distractor(n, c, e, *types[n], cts, ets) for n, c, e, cts, ets in raw_distractors]
    presences, absences = _silence_records(ev, kept, absences_raw)

    def involved() -> set[str]:
        out = {x for _, c, e, _, _ in raw_edges + raw_distractors for x in (c, e)}
        out |= {x for _, t, _, r, _ in presences_raw for x in (t, r)} | {t for _, t, _ in absences_raw}
        return out

    events = EventIndex(gs, involved)
    if search_spaces:
        presences = with_search_spaces(store, presences, events, gs)
        absences = with_search_spaces(store, absences, events, gs)
    presences.sort()
    absences.sort()
    ambiguous.sort()

    stats = {
        "causal_edges": len(edges),
        "distractors": len(distractors),
        "absences": len(absences),
        "presences": len(presences),
        "duplicate_presences": duplicates,
        "ambiguous": {r: sum(1 for a in ambiguous if a.reason == r) for r in sorted({a.reason for a in ambiguous})},
        "multi_cause_effects": sum(1 for v in causes_of.values() if len(v) > 1),
    }
    return EventGraph(edges, distractors, absences, presences, ambiguous, events, stats)


def sampled_graph(store: Store, seed: int, keep: int) -> EventGraph | None:
    """The graph as question generation reads it, without a Python record per edge or
    trigger: per spec and polarity (Counterfactual) or kind (Silence), only the ``keep``
    records the tracks' pools keep (``questions.pool.seeded_sample``, salted with the
    track's name) chosen in SQL by the same seeded hashes; the stats of the whole graph; its first 100 ambiguous triggers.
    Sampling these records again gives the samples of :func:`build_graph`'s graph (the
    test compares the questions). ``None`` when spec names or silence keys repeat:
    build the whole graph then."""
    ev = store.manifest.evaluation
    names = [s.name for s in ev.causal_links]
    keys = [s.key for s in ev.silence_pairs]
    if len(set(names)) < len(names) or len(set(keys)) < len(keys):
        return None
    gs = GraphSQL(store.cursor)
    gs.load(**_definitions(ev))
    gs.causal_edges(into="ge_edge")
    gs.next_effects(into="ge_next")
    release_freed_memory(store.cursor)  # the two joins' hash tables (~40 MB at 22.5K events), before the next
    gs.silence_status(into="ge_sil")
    gs.put("ge_cname", [("src", "VARCHAR"), ("name", "VARCHAR")], [(f"c{i}", n) for i, n in enumerate(names)])
    gs.put(
        "ge_sname",
        [("src", "VARCHAR"), ("i", "INTEGER"), ("key", "VARCHAR")],
        [(f"s{i}", i, k) for i, k in enumerate(keys)],
    )
    got = gs.sampled_records((f"{seed}\x1fcounterfactual\x1f", f"{seed}\x1fsilence\x1f"), (keep, keep))
    types = {s.name: (s.cause_event_type, s.effect_event_type) for s in ev.causal_links}
    edges, distractors = [], []
    for name, causal, c, e, cts, ets, multi in got["pairs"]:
        if causal:
            edges.append(CausalEdge(name, c, e, *types[name], cts, ets, multi))
        else:
            distractors.append(Distractor(name, c, e, *types[name], cts, ets))
    kept = [(i, t, tts, r, rts) for i, kind, t, tts, r, rts in got["triggers"] if kind == "presence"]
    absent = [(i, t, tts) for i, kind, t, tts, _, _ in got["triggers"] if kind == "absence"]
    presences, absences = _silence_records(ev, kept, absent)
    ambiguous = [AmbiguousTrigger(keys[i], t, reason, other) for i, t, reason, other in got["ambiguous"]]
    n = got["counts"]
    reasons = sorted(r for r in n if r in ("missing_join_key", "response_before_trigger", "response_outside_gap"))
    stats = {
        "causal_edges": n.get("causal_edges", 0),
        "distractors": n.get("distractors", 0),
        "absences": n.get("absences", 0),
        "presences": n.get("presences", 0),
        "duplicate_presences": n.get("presences_all", 0) - n.get("presences", 0),
        "ambiguous": {r: n[r] for r in reasons},
        "multi_cause_effects": n.get("multi_cause_effects", 0),
    }
    ids = {x for r in edges + distractors for x in (r.cause_event_id, r.effect_event_id)}
    ids |= {x for r in presences + absences for x in (r.trigger_event_id, r.response_event_id) if x}
    return EventGraph(
        edges, distractors, sorted(absences), sorted(presences), ambiguous, EventIndex(gs, lambda: ids), stats
    )


def _definitions(ev: Any) -> dict[str, list]:
    """The rows of ``GraphSQL.load``'s definition tables for every causal and silence spec."""
    defs: dict[str, list] = {"sides": [], "sources": [], "matches": [], "specs": [], "joins": []}
    for i, spec in enumerate(ev.causal_links):
        _define(
            f"c{i}",
            "c",
            spec.cause_event_type,
            spec.effect_event_type,
            [(j.cause, j.effect) for j in spec.join],
            spec.match_field,
            spec.match_value,
            gap_us(spec.max_gap_days),
            defs,
        )
    for i, spec in enumerate(ev.silence_pairs):
        _define(
            f"s{i}",
            "s",
            spec.trigger_event_type,
            spec.response_event_type,
            [(j.trigger, j.response) for j in spec.join],
            spec.match_field,
            spec.match_value,
            gap_us(spec.max_gap_days),
            defs,
        )
    return defs


def _silence_status(
    gs: GraphSQL, ev: Any
) -> tuple[list[tuple[int, str, int, str, int]], list[tuple[int, str, int]], list[AmbiguousTrigger]]:
    """Each trigger's status: presences (spec index, trigger, its µs, response, its µs),
    absences (spec index, trigger, its µs) and ambiguous triggers."""
    presences: list[tuple[int, str, int, str, int]] = []
    absences: list[tuple[int, str, int]] = []
    ambiguous: list[AmbiguousTrigger] = []
    for src, tid, missing, presence, before, outside, tts, pts in gs.silence_status():
        i = int(src[1:])
        key = ev.silence_pairs[i].key
        if missing:
            ambiguous.append(AmbiguousTrigger(key, tid, "missing_join_key"))
        elif presence is not None:
            presences.append((i, tid, tts, presence, pts))
        elif before is not None:
            ambiguous.append(AmbiguousTrigger(key, tid, "response_before_trigger", before))
        elif outside is not None:
            ambiguous.append(AmbiguousTrigger(key, tid, "response_outside_gap", outside))
        else:
            absences.append((i, tid, tts))
    return presences, absences, ambiguous


def _first_triggers(
    presences: list[tuple[int, str, int, str, int]],
) -> tuple[list[tuple[int, str, int, str, int]], int]:
    """A response answering several triggers of one spec is one presence (its earliest
    trigger); returns the kept presences and how many were dropped. Sorts ``presences``."""
    presences.sort(key=lambda p: (p[0], p[3], p[2], p[1]))
    seen: set[tuple[int, str]] = set()
    kept = []
    for i, t, tts, r, rts in presences:
        if (i, r) not in seen:
            seen.add((i, r))
            kept.append((i, t, tts, r, rts))
    return kept, len(presences) - len(kept)


def _silence_records(
    ev: Any, presences: list[tuple[int, str, int, str, int]], absences: list[tuple[int, str, int]]
) -> tuple[list[SilenceRecord], list[SilenceRecord]]:
    fixed = [
        (
            sp.key,
            sp.trigger_event_type,
            sp.response_event_type,
            gap_us(sp.max_gap_days),
            tuple(sorted(set(sp.search_space_subsystems))),
        )
        for sp in ev.silence_pairs
    ]
    out_p, out_a = [], []
    for i, t, tts, r, rts in presences:
        key, ttype, rtype, gap, subs = fixed[i]
        out_p.append(SilenceRecord(key, "presence", t, ttype, rtype, tts, gap, r, rts, (), subs))
    for i, t, tts in absences:
        key, ttype, rtype, gap, subs = fixed[i]
        out_a.append(SilenceRecord(key, "absence", t, ttype, rtype, tts, gap, None, None, (), subs))
    return out_p, out_a


def _by_spec(rows: list[tuple], names: list[str]) -> list[tuple]:
    """SQL rows ``(src, cause, effect, cause_us, effect_us)``, unique per (src, cause) and
    ordered by them, as ``(spec name, ...)`` in record order (name, cause, effect)."""
    out = [(names[int(src[1:])], c, e, cts, ets) for src, c, e, cts, ets in rows]
    if len(set(names)) == len(names):
        out.sort(key=itemgetter(0))  # stable: each spec's rows keep their SQL order
    else:
        out = sorted(set(out))
    return out


def needs_fts(store: Store) -> bool:
    """Whether any silence selector ranks by BM25 (the FTS index must be loaded first)."""
    return any(
        sel.query_template and sel.match == "bm25"
        for sp in store.manifest.evaluation.silence_pairs
        for sel in sp.search_space_selectors
    )


def with_search_spaces(
    store: Store, records: list[SilenceRecord], events: Mapping[str, EventInfo], gs: GraphSQL | None = None
) -> list[SilenceRecord]:
    """The records with their expected search space filled: the trigger's artifacts, id
    templates that resolve to an existing artifact, and the ranked BM25 hits (or, for
    ``match: phrase``, the phrase hits) of query templates within their subsystem. Batched:
    one BM25 query and one phrase query for all records.
    (Separate from :func:`build_graph` so a generator can fill only the records it may use.)"""
    if gs is None:
        if needs_fts(store):
            store.ensure_fts()
        gs = GraphSQL(store.cursor)
    if isinstance(events, EventIndex):
        events.load(r.trigger_event_id for r in records)  # just the triggers, in one query
    index = {s.key: i for i, s in enumerate(store.manifest.evaluation.silence_pairs)}
    spaces = _search_spaces(store, gs, [(index[r.spec], r.trigger_event_id) for r in records], events)
    return [
        r._replace(
            expected_search_space=spaces[(index[r.spec], r.trigger_event_id)][0],
            expected_subsystems=spaces[(index[r.spec], r.trigger_event_id)][1],
        )
        for r in records
    ]


def _search_spaces(
    store: Store, gs: GraphSQL, records: list[tuple[int, str]], events: dict[str, EventInfo]
) -> dict[tuple[int, str], tuple[tuple[str, ...], tuple[str, ...]]]:
    ev = store.manifest.evaluation
    wanted: dict[tuple[int, str], set[str]] = {}
    id_checks: list[tuple[tuple[int, str], str, str | None]] = []
    # per match kind: the queries (qid, subsystem, text, limit) and the record each is for
    ranked: dict[str, tuple[list[tuple[int, str, str, int]], list[tuple[int, str]]]] = {
        "bm25": ([], []),
        "phrase": ([], []),
    }
    for i, t in records:
        spec = ev.silence_pairs[i]
        rec = events[t].record
        wanted[(i, t)] = set(events[t].artifacts)
        for sel in spec.search_space_selectors:
            if sel.id_template is not None:
                aid = render_template(sel.id_template, rec)
                if aid:
                    id_checks.append(((i, t), aid, sel.subsystem))
            else:
                text = render_template(sel.query_template or "", rec)
                queries, owners = ranked[sel.match]
                if text:
                    queries.append((len(queries), sel.subsystem, text, sel.limit))
                    owners.append((i, t))
        for tmpl in spec.search_space:
            aid = render_template(tmpl, rec)
            if aid:
                id_checks.append(((i, t), aid, None))
    exists = gs.existing_in([(a, s) for _, a, s in id_checks])
    for owner, aid, sub in id_checks:
        if (aid, sub) in exists:
            wanted[owner].add(aid)
    for kind, (queries, owners) in ranked.items():
        for qid, aid in (gs.bm25_batch if kind == "bm25" else gs.phrase_batch)(queries) if queries else ():
            wanted[owners[qid]].add(aid)
    info = gs.artifacts_info({a for s in wanted.values() for a in s})
    # A subsystem the pack does not have (GE209) cannot be searched — the runtime refuses it as
    # unknown — so it is not expected either: an honest path must be able to score 1.
    from ..store.cone import known_subsystems

    searchable = known_subsystems(store)
    out = {}
    for (i, t), ids in wanted.items():
        spec = ev.silence_pairs[i]
        subs = set(spec.search_space_subsystems) | {s.subsystem for s in spec.search_space_selectors}
        subs = (subs & searchable) | {info[a][0] for a in ids if a in info}
        out[(i, t)] = (tuple(sorted(a for a in ids if a in info)), tuple(sorted(subs)))
    return out


# Why an absence is not verified though no joined response came (``GraphSQL.absence_doubts``).
DOUBT_REASONS = ("response_without_join_key", "response_mentions_key")
_NOT_WORD = re.compile(r"[^a-z0-9]+")
MIN_KEY_TEXT = 3  # a trigger key shorter than this (normalised) is not looked for in texts ("42" is everywhere)


def key_text(value: str) -> str:
    """A join key as ``absence_doubts`` looks for it in a text: lowered, runs of characters other
    than ``a-z0-9`` as one space, with a space around (``"INC-42"`` -> ``" inc 42 "``); ``""`` when
    shorter than :data:`MIN_KEY_TEXT` characters."""
    core = _NOT_WORD.sub(" ", value.lower()).strip()
    return f" {core} " if len(core) >= MIN_KEY_TEXT else ""


def doubtful_absences(
    store: Store, records: list[SilenceRecord], events: Mapping[str, EventInfo], gs: GraphSQL | None = None
) -> dict[tuple[str, str], tuple[str, str]]:
    """The absences (with their search spaces filled) that are not verified: ``(spec, trigger) ->
    (reason, event id)`` when something in the window or the expected search space could be the
    response, so a reader would answer "yes" on its face. An event of the response type inside
    the gap, or one (at any time) referencing an artifact of the expected search space, could be
    the response when (see ``GraphSQL.absence_doubts``):

    * ``response_without_join_key``: it lacks a response join key (nothing tells it apart from
      this trigger's response);
    * ``response_mentions_key``: its text (its fields, its documents' title and text) names a
      trigger join key, though its own join key differs.

    An event whose join key names another trigger and whose text does not name this one is
    that trigger's response, not a doubt. Such triggers are ambiguous: never questions,
    counted in ``skipped.silence.<reason>``."""
    absent = [r for r in records if r.kind == "absence"]
    if not absent:
        return {}
    if gs is None:
        gs = GraphSQL(store.cursor)
    if isinstance(events, EventIndex):
        events.load(r.trigger_event_id for r in absent)
    specs = {s.key: s for s in store.manifest.evaluation.silence_pairs}
    windows, paths, keys, spaces = [], [], [], []
    for n, r in enumerate(absent):
        spec = specs[r.spec]
        windows.append((n, r.trigger_event_id, r.response_type, r.trigger_ts_us, r.trigger_ts_us + r.gap_microseconds))
        record = events[r.trigger_event_id].record
        found: set[str] = set()
        for j in spec.join:
            first, *rest = json_paths(j.response)
            paths.append((n, first, rest[-1] if rest else first))
            found |= {t for k in join_key(resolve(record, j.trigger)) if (t := key_text(k))}
        keys += [(n, k) for k in sorted(found)]
        spaces += [(n, a) for a in r.expected_search_space]
    got = gs.absence_doubts(windows, paths, keys, spaces)
    return {(absent[n].spec, absent[n].trigger_event_id): why for n, why in got.items()}


def _networkx(events: dict[str, EventInfo], edges, distractors, presences, absences) -> nx.MultiDiGraph:
    import networkx as nx

    g = nx.MultiDiGraph()
    silence: dict[str, list[str]] = {}
    for r in presences + absences:
        silence.setdefault(r.trigger_event_id, []).append(f"{r.spec}:{r.kind}")
    for eid in sorted(events):
        e = events[eid]
        attrs = {"type": e.type, "ts": iso(to_utc(e.ts_us))}
        if eid in silence:
            attrs["silence"] = ";".join(sorted(silence[eid]))
        g.add_node(eid, **attrs)
    for x in edges:
        g.add_edge(
            x.cause_event_id,
            x.effect_event_id,
            key=f"causal:{x.spec}",
            kind="causal",
            spec=x.spec,
            multi_cause=x.multi_cause,
        )
    for x in distractors:
        g.add_edge(x.cause_event_id, x.effect_event_id, key=f"distractor:{x.spec}", kind="distractor", spec=x.spec)
    for x in presences:
        g.add_edge(x.trigger_event_id, x.response_event_id, key=f"response:{x.spec}", kind="response", spec=x.spec)
    return g
