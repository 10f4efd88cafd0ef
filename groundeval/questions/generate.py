"""Question generation: graph + cone → candidates → balanced selection → text → QuestionSet.

Every registered track (``groundeval.tracks``) takes part, in registry order: each
samples its pool, names the events and artifacts it needs (read in one query each for
all tracks) and the subjects its questions name (resolved in one batch for all tracks),
builds its candidates; selection, templates, leakage checks and ids are the same for
every track.

Deterministic for a contract and seed: candidates are ordered by seeded hashes of
stable keys, templates are assigned by seeded hash (round-robin per label, so no
template predicts the answer), ids are content hashes of canonical JSON, and one
global seeded shuffle orders the final list.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Callable

from ..gc_pause import collector_paused
from ..graph.build import EventGraph, build_graph, sampled_graph
from ..graph.sql import GraphSQL
from ..store.store import Store, release_freed_memory
from ..tracks import GenerationContext, Track, builtin_tracks, tracks
from . import sql
from .audit import shortcut_audit
from .balance import Candidate, seeded_hash, select
from .leakage import leaks
from .model import Question, QuestionSet, QuestionSetMeta
from .pool import sample_size
from .subjects import SubjectIndex
from .text import format_time, humanize, render

Prose = Callable[[dict[str, Any]], str]
PROSE_ATTEMPTS = 3
GENERATOR_VERSION = "1"


def _slots(c: Candidate) -> dict[str, str]:
    p = c.payload
    slots = dict(p["slots"])
    if "actor" in slots:
        slots["as_of"] = format_time(p["as_of"])
    return slots


def _valid_templates(track: Track, c: Candidate, vocabulary: list[str]) -> list[str]:
    """Templates whose text does not leak. Leakage is judged by role: the subject
    references may show their identifiers and event type names (they name what the
    question is about); answer-side ids are rejected anywhere, and ground-truth
    vocabulary anywhere outside the references. Template wording is fixed and clean,
    so the slots decide: they are checked once, as the text every template shows."""
    slots = _slots(c)
    if not track.text_ok(slots):
        return []
    names = set(c.payload.get("names", ()))
    ids = [i for i in track.truth_ids(c.payload["truth"]) if i not in names]
    text = " | ".join(slots[k] for k in sorted(slots))
    masked = text
    for ref in c.payload.get("refs", ()):
        masked = masked.replace(ref, "the event")
    if leaks(text, ids=ids) or leaks(masked, vocabulary=vocabulary):
        return []
    return [tid for tid, _ in track.templates]


def _assign_templates(track: Track, picked: list[Candidate], seed: int) -> dict[str, str]:
    """Pair each "no" with a "yes" (in seeded order) and give both the same template,
    cycling templates from a seeded offset: every template then serves both answers."""
    tids = [t for t, _ in track.templates]
    groups = {
        label: sorted((c for c in picked if c.label == label), key=lambda c: seeded_hash(seed, "tpl", c.key))
        for label in (False, True)
    }
    offset = int(seeded_hash(seed, track.name), 16) % len(tids)
    out = {}
    for label, group in groups.items():
        for rank, c in enumerate(group):
            valid = c.payload["templates"]
            for step in range(len(tids)):
                tid = tids[(offset + rank + step) % len(tids)]
                if tid in valid:
                    out[c.key] = tid
                    break
    return out


def _prose_text(prose: Prose, request: dict[str, Any], ids: list[str], vocabulary: list[str]) -> str | None:
    """The hook's text if it passes the validator within ``PROSE_ATTEMPTS`` tries."""
    for _ in range(PROSE_ATTEMPTS):
        try:
            text = prose(dict(request))
        except Exception:  # an adapter failure falls back to the template
            continue
        if isinstance(text, str) and text.strip() and not leaks(text, ids=ids, vocabulary=vocabulary):
            return " ".join(text.split())
    return None


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _question(
    track: Track, c: Candidate, template_id: str, mechanisms: list[str], vocabulary: list[str], prose: Prose | None
) -> Question:
    p = c.payload
    slots = _slots(c)
    text = render(track.name, template_id, slots)
    source = "template"
    if prose is not None:
        request = {
            "track": track.name,
            "text": text,
            "actor": p["actor"],
            "as_of": format_time(p["as_of"]),
            "slots": slots,
            "references": list(p.get("refs", ())),
        }  # subject reference texts
        names = set(p.get("names", ()))
        better = _prose_text(prose, request, [i for i in track.truth_ids(p["truth"]) if i not in names], vocabulary)
        if better:
            text, source = better, "prose"
    meta = {"event_type": p["event_type"], "subjects": p["subjects"], "text_source": source}
    if "spec" in p:
        meta["spec"] = p["spec"]
    q = Question(
        id="",
        track=track.name,
        bucket=c.bucket,
        difficulty=c.difficulty,
        text=text,
        actor=p["actor"],
        as_of=p["as_of"],
        gates=p["gates"],
        answer_schema=track.answer_schema(mechanisms),
        ground_truth=p["truth"],
        template_id=template_id,
        context_subsystems=p["context_subsystems"],
        meta=meta,
    )
    body = q.model_dump(mode="json", exclude={"id"})
    return q.model_copy(update={"id": "q_" + hashlib.sha256(_canonical(body).encode()).hexdigest()[:16]})


def _vocabulary(gs: GraphSQL, ev: Any, specs: tuple[Track, ...]) -> list[str]:
    """Ground-truth vocabulary (the tracks' answer words, e.g. mechanism names and aliases),
    except words that name an event type: a question must be able to say which events it
    is about."""
    type_words = [f" {humanize(t).lower()} " for t in gs.event_types()]
    return sorted(
        {
            v
            for t in specs
            for v in t.vocabulary(ev)
            if len(v.replace("_", " ").split()) >= 2 and not any(f" {humanize(v).lower()} " in w for w in type_words)
        }
    )


def _context(
    store: Store, seed: int, graph: EventGraph | None, specs: tuple[Track, ...]
) -> tuple[GenerationContext, dict[str, Any]]:
    """The shared context, and each track's prepared pool: events and artifacts are read
    once for all tracks."""
    ev = store.manifest.evaluation
    eg = graph if graph is not None else _graph(store, seed, specs)
    ctx = GenerationContext(store=store, ev=ev, graph=eg, sql=GraphSQL(store.cursor), seed=seed)
    # Only the sampled pools are ever read: fetch just their events, in one query.
    pools = {t.name: t.pool(ctx) for t in specs}
    eg.events.load(set().union(*(t.pool_events(pools[t.name]) for t in specs)))
    for t in specs:  # each phase starts low: a track's preparation holds 40-80 MB freed at 22.5K events
        release_freed_memory(store.cursor)
        pools[t.name] = t.prepare(ctx, pools[t.name])
    display = {a: s.display_name or a for a, s in store.manifest.access.actors.items()}
    ctx.subjects = SubjectIndex(ctx.sql, display)
    ctx.artifacts = ctx.sql.artifacts_info(set().union(*(t.pool_artifacts(ctx, pools[t.name]) for t in specs)))
    ctx.mechanisms = sorted({s.name for s in ev.causal_links})
    ctx.vocabulary = _vocabulary(ctx.sql, ev, specs)
    # Every track's subject references in one batch (a track without the optional hook
    # resolves its own in its candidates, as before); a list, as the hook may yield them.
    ctx.requests = {
        t.name: list(t.subject_requests(ctx, pools[t.name])) for t in specs if hasattr(t, "subject_requests")
    }
    release_freed_memory(store.cursor)  # the last track's preparation too: the references count on top
    ctx.subjects.resolve(r for requests in ctx.requests.values() for r in requests)
    return ctx, pools


def samples_suffice(specs: Iterable[Track]) -> bool:
    """Whether generating with ``specs`` reads only seeded samples of the graph's records:
    true for the built-in tracks; another track may read the whole graph. The verifier's
    dry run builds its graph by the same rule."""
    builtin = {id(t) for t in builtin_tracks()}
    return all(id(t) in builtin for t in specs)


def _graph(store: Store, seed: int, specs: tuple[Track, ...]) -> EventGraph:
    """The built-in tracks' samples are chosen in SQL (``sampled_graph``), not built in
    Python for every edge and trigger; another track gets the whole graph."""
    if samples_suffice(specs):
        eg = sampled_graph(store, seed, sample_size(store.manifest.evaluation))
        if eg is not None:
            GraphSQL.drop_sampling_tables(store.cursor)  # its records are in eg: a lower peak later
            release_freed_memory(store.cursor)
            return eg
    return build_graph(store, search_spaces=False)


def _track_questions(
    track: Track, ctx: GenerationContext, pool: Any, prose: Prose | None, questions: dict[str, Question]
) -> tuple[dict[str, Any], dict[str, int]]:
    """Select and word one track's questions into ``questions``; returns (balance, skipped)."""
    ev = ctx.ev
    cands, skip = track.candidates(ctx, pool)
    usable = []
    for c in cands:
        c.payload["templates"] = _valid_templates(track, c, ctx.vocabulary)
        if c.payload["templates"]:
            usable.append(c)
        else:
            skip["leakage"] = skip.get("leakage", 0) + 1
    difficulty = {"easy": ev.easy_ratio, "medium": ev.medium_ratio, "hard": ev.hard_ratio}
    picked, balance = select(
        usable,
        total=track.cap(ev),
        bucket_ratios=track.bucket_ratios(ev),
        difficulty_ratios=difficulty,
        max_per_actor=ev.max_per_actor,
        max_per_type=ev.max_per_event_type,
        seed=ctx.seed,
    )
    templates = _assign_templates(track, picked, ctx.seed)
    for c in picked:
        q = _question(track, c, templates[c.key], ctx.mechanisms, ctx.vocabulary, prose)
        old = questions.get(q.id)
        if old is not None:
            if _canonical(old.model_dump(mode="json")) != _canonical(q.model_dump(mode="json")):
                raise RuntimeError(f"question id collision on {q.id}")
            skip["duplicate"] = skip.get("duplicate", 0) + 1
            continue
        questions[q.id] = q
    return balance, skip


def generate(
    store: Store, *, seed: int | None = None, prose: Prose | None = None, graph: EventGraph | None = None
) -> QuestionSet:
    """Generate the balanced question set of a loaded pack, one part per registered track.

    ``graph``: the pack's ``build_graph(store, search_spaces=False)``, when the caller
    (the verifier) has built it already; the result is the same either way."""
    with collector_paused(), _one_thread_when_small(store):
        return _generate(store, store.manifest.evaluation.seed if seed is None else seed, prose, graph)


ROW_GROUP = 122_880  # DuckDB's rows per row group: its unit of parallel work in a table scan


@contextmanager
def _one_thread_when_small(store: Store) -> Iterator[None]:
    """DuckDB on one thread while a log fits one row group: every scan is one task then, and
    a second thread only adds scheduling (p22: 1.9 -> 1.5 s CPU for generation, o100 4.5 ->
    3.4 s). The setting is the database's, restored after."""
    cur = store.cursor
    before = sql.threads(cur)
    small = sql.event_count(cur) <= ROW_GROUP
    if small and before != 1:
        sql.threads(cur, 1)
    try:
        yield
    finally:
        if small and before != 1:
            sql.threads(cur, before)


def _generate(store: Store, seed: int, prose: Prose | None, graph: EventGraph | None) -> QuestionSet:
    specs = tracks()
    ctx, pools = _context(store, seed, graph, specs)
    eg = ctx.graph
    questions: dict[str, Question] = {}
    balance: dict[str, Any] = {}
    skipped: dict[str, Any] = {
        "ambiguous_triggers": dict(eg.stats["ambiguous"]),
        "ambiguous_records": [a.to_dict() for a in eg.ambiguous[:100]],
        "duplicate_presences": eg.stats["duplicate_presences"],
    }
    for track in specs:
        balance[track.name], skip = _track_questions(track, ctx, pools[track.name], prose, questions)
        skipped[track.name] = dict(sorted(skip.items()))

    ordered = [questions[k] for k in sorted(questions)]
    random.Random(seed).shuffle(ordered)
    counts: dict[str, Any] = {"total": len(ordered)}
    for track in specs:
        qs = [q for q in ordered if q.track == track.name]
        counts[track.name] = {
            "total": len(qs),
            "buckets": dict(sorted(Counter(q.bucket for q in qs).items())),
            "difficulty": dict(sorted(Counter(q.difficulty for q in qs).items())),
        }
    meta = QuestionSetMeta(
        contract_digest=store.digest,
        pack=store.manifest.name,
        seed=seed,
        generator_version=GENERATOR_VERSION,
        counts=counts,
        balance=balance,
        skipped=skipped,
        shortcut_audit=shortcut_audit(ordered),
    )
    return QuestionSet(metadata=meta, questions=ordered)
