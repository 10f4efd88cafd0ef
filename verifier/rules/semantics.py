"""Level 3 — semantics: a contract that references correctly but cannot mean what it says.

Causal and silence checks read the event graph (``groundeval.graph.build``), so the
verifier judges exactly the links and absences the question generator will use.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .. import sql
from ..context import PackContext
from .registry import check, define, finding

define(
    "GE301",
    "semantics",
    3,
    "warning",
    "causal link spec produces no links",
    "No cause/effect pair joins within the gap, so the spec yields no Counterfactual question.",
    "Check the join paths, the max_gap_days and the event types against the log.",
)
define(
    "GE302",
    "semantics",
    3,
    "warning",
    "silence pair has no triggers",
    "No trigger event matches the pair, so it yields no Silence question.",
    "Check trigger_event_type and match_field/match_value against the log.",
)
define(
    "GE303",
    "semantics",
    3,
    "error",
    "empty expected search space",
    "An absence with nothing to search lets any lazy 'no' score as fully verified.",
    "Give the pair search_space_selectors or id templates that resolve on its triggers.",
)
define(
    "GE304",
    "semantics",
    3,
    "warning",
    "role has no subsystems",
    "A role without subsystems sees nothing; if intended, declare it external.",
    "Grant the role its subsystems, or set `external: true`.",
)
define(
    "GE305",
    "semantics",
    3,
    "warning",
    "Perspective bucket cannot be filled",
    "A requested bucket with no candidate cases makes the requested balance unreachable.",
    "Adjust evaluation.perspective shares, perspective_actors, or the access policy.",
)
define(
    "GE306",
    "semantics",
    3,
    "warning",
    "suspect absence",
    "A response logged before its trigger, just outside the gap, or a trigger without the join key "
    "would turn into a false 'no' label; the generator sets such triggers aside.",
    "Fix the response's timestamp, widen max_gap_days, or add the join key to the trigger.",
)
define(
    "GE307",
    "semantics",
    3,
    "warning",
    "artifact no role can ever see",
    "No actor ever holds a role that can see it, so it can only ever be a violation.",
    "Grant its subsystem to a role held by someone after its creation, or fix its restriction.",
)
define(
    "GE308",
    "semantics",
    3,
    "warning",
    "time window misses the log",
    "A role or grant window that never overlaps the event log has no effect on any question.",
    "Fix the since/until dates (since inclusive, until exclusive).",
)
define(
    "GE309",
    "semantics",
    3,
    "error",
    "empty time window",
    "A window whose since is not before its until covers no time at all.",
    "Make since earlier than until, or drop one of them for an open window.",
)


def _spec_loc(ctx: PackContext, family: str, key: str) -> tuple[int | None, str]:
    specs = ctx.manifest.evaluation.causal_links if family == "causal_links" else ctx.manifest.evaluation.silence_pairs
    for i, spec in enumerate(specs):
        if (spec.name if family == "causal_links" else spec.key) == key:
            return ctx.locate(("evaluation", family, i))
    return None, "$.evaluation." + family


def _event_where(locs: dict, event_id: str | None) -> dict:
    loc = locs.get(event_id)
    return {"file": loc[0], "line": loc[1], "record": event_id} if loc else {"record": event_id}


@check("GE301", needs=("manifest", "store", "graph"))
def causal_links(ctx: PackContext) -> Iterable:
    linked = ctx.graph_facts.linked
    for spec in ctx.manifest.evaluation.causal_links:
        if spec.name not in linked:
            line, path = _spec_loc(ctx, "causal_links", spec.name)
            yield finding(
                "GE301",
                f"{spec.name}: no {spec.cause_event_type} -> {spec.effect_event_type} pair "
                f"joins within {spec.max_gap_days:g} days",
                file=ctx.manifest_file,
                line=line,
                path=path,
            )


@check("GE302", "GE303", "GE306", needs=("manifest", "store", "graph"))
def silence_pairs(ctx: PackContext) -> Iterable:
    g = ctx.graph_facts
    for spec in ctx.manifest.evaluation.silence_pairs:
        if spec.key not in g.triggered:
            line, path = _spec_loc(ctx, "silence_pairs", spec.key)
            yield finding(
                "GE302",
                f"{spec.key}: no {spec.trigger_event_type} event is a trigger",
                file=ctx.manifest_file,
                line=line,
                path=path,
            )
    empty = empty_search_spaces(ctx.store, g.absences, g.events)
    locs = sql.event_locations(  # only the events a finding names
        ctx.store,
        [r.trigger_event_id for r in [*empty, *g.ambiguous]]
        + [r.response_event_id for r in g.ambiguous if r.response_event_id],
    )
    for rec in empty:
        yield finding(
            "GE303",
            f"{rec.spec}: the absence after trigger {rec.trigger_event_id} has an empty expected search space",
            **_event_where(locs, rec.trigger_event_id),
        )
    reasons = {
        "response_before_trigger": "response {resp} is logged before trigger {trig}",
        "response_outside_gap": "response {resp} comes just after the gap of trigger {trig}",
        "missing_join_key": "trigger {trig} lacks the join key, so no response can ever match it",
    }
    for rec in g.ambiguous:
        text = reasons.get(rec.reason, rec.reason + " ({trig})").format(
            resp=rec.response_event_id or "-", trig=rec.trigger_event_id
        )
        trig, resp = locs.get(rec.trigger_event_id), locs.get(rec.response_event_id)
        if trig is not None and resp is not None:
            delta = resp[2] - trig[2]
            text += f" ({_duration(delta)} {'after' if delta >= 0 else 'before'} it)"
        yield finding("GE306", f"{rec.spec}: {text}", **_event_where(locs, rec.trigger_event_id))


def empty_search_spaces(store, records: list, events: Mapping) -> list:
    """The records whose expected search space (as the generator fills it) is empty.

    The space is the trigger's artifacts, the id templates that resolve to an existing
    artifact and the BM25 hits of query templates. The first two are cheap and usually
    settle it, so only records left empty by them are ranked, with the generator's own
    :func:`~groundeval.graph.build.with_search_spaces`."""
    from groundeval.contract.paths import render_template
    from groundeval.graph.build import EventIndex, with_search_spaces
    from groundeval.graph.sql import GraphSQL

    specs = {s.key: s for s in store.manifest.evaluation.silence_pairs}
    if isinstance(events, EventIndex):  # lazy: fetch just the triggers without found artifacts
        found = sql.events_with_artifacts(store, [r.trigger_event_id for r in records])
        records = [r for r in records if r.trigger_event_id not in found]
        events.load(sorted({r.trigger_event_id for r in records}))
    checks: list[tuple[int, str, str | None]] = []  # (record index, artifact id, subsystem or None)
    undecided: list[int] = []
    for n, rec in enumerate(records):
        info = events[rec.trigger_event_id]
        if info.artifacts:  # found artifacts of the trigger itself
            continue
        undecided.append(n)
        spec = specs[rec.spec]
        for sel in spec.search_space_selectors:
            if sel.id_template is not None:
                aid = render_template(sel.id_template, info.record)
                if aid:
                    checks.append((n, aid, sel.subsystem))
        for tmpl in spec.search_space:
            aid = render_template(tmpl, info.record)
            if aid:
                checks.append((n, aid, None))
    if not undecided:
        return []
    exists = GraphSQL(store.cursor).existing_in([(a, s) for _, a, s in checks]) if checks else set()
    hit = {n for n, a, s in checks if (a, s) in exists}
    rest = [records[n] for n in undecided if n not in hit]
    ranked = [r for r in rest if any(sel.query_template for sel in specs[r.spec].search_space_selectors)]
    filled = {(r.spec, r.trigger_event_id): r for r in with_search_spaces(store, ranked, events)} if ranked else {}
    return [r for r in rest if not filled.get((r.spec, r.trigger_event_id), r).expected_search_space]


def _duration(delta_us: int) -> str:
    minutes = abs(delta_us) // 60_000_000
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    parts = [f"{days}d"] * bool(days) + [f"{hours}h"] * bool(hours) + [f"{mins}m"] * bool(mins)
    return " ".join(parts) or "0m"


define(
    "GE310",
    "semantics",
    3,
    "warning",
    "events no artifact records",
    "No event of this spec's type references an artifact created at or after it (one minute's tolerance): "
    "documents cannot record what happened after they were written, so Perspective can never ask about it.",
    "Reference, from these events, the document each one writes (a message, a note, a record created then).",
)


@check("GE310", needs=("manifest", "store"))
def unwitnessed_types(ctx: PackContext) -> Iterable:
    ev = ctx.manifest.evaluation
    wanted = sorted(
        {t for s in ev.causal_links for t in (s.cause_event_type, s.effect_event_type)}
        | {t for s in ev.silence_pairs for t in (s.trigger_event_type, s.response_event_type)}
    )
    if not wanted:
        return
    for etype, witnessed in sql.witnessed_counts(ctx.store, wanted):
        if witnessed == 0:
            yield finding(
                "GE310", f"no {etype!r} event references a document created at or after it", file=ctx.manifest_file
            )


@check("GE304", needs=("manifest",))
def empty_roles(ctx: PackContext) -> Iterable:
    for role, spec in sorted(ctx.manifest.access.roles.items()):
        if not spec.subsystems and not spec.external:
            line, path = ctx.locate(("access", "roles", role))
            yield finding(
                "GE304",
                f"role {role!r} has no subsystems and is not external",
                file=ctx.manifest_file,
                line=line,
                path=path,
            )


def perspective_actors(ctx: PackContext) -> list[str]:
    """The actors Perspective questions may be about: configured, else every non-system actor."""
    m = ctx.manifest
    if m.evaluation.perspective_actors:
        return sorted(set(m.evaluation.perspective_actors))
    return sorted(a for a, spec in m.access.actors.items() if not spec.system)


@check("GE305", needs=("manifest", "store"))
def perspective_buckets(ctx: PackContext) -> Iterable:
    cfg = ctx.manifest.evaluation.perspective
    if ctx.manifest.evaluation.max_perspective_questions == 0:
        return
    cand = sql.perspective_candidates(ctx.store, perspective_actors(ctx), cfg.pivots_per_actor)
    ctx.stats["perspective_candidates"] = cand
    for bucket, n in cand.items():
        share = getattr(cfg, bucket)
        if share > 0 and n == 0:
            line, path = ctx.locate(("evaluation", "perspective", bucket))
            yield finding(
                "GE305",
                f"bucket {bucket} is requested (share {share:g}) but no actor/as-of/artifact case falls into it",
                file=ctx.manifest_file,
                line=line,
                path=path,
            )


@check("GE307", needs=("manifest", "store"))
def never_visible(ctx: PackContext) -> Iterable:
    for aid, subsystem, file, line in sql.never_visible_artifacts(ctx.store):
        yield finding(
            "GE307",
            f"artifact {aid!r} ({subsystem}) is visible to no actor at any time",
            file=file,
            line=line,
            record=aid,
        )


@check("GE308", "GE309", needs=("manifest", "store"))
def windows(ctx: PackContext) -> Iterable:
    roles = ctx.manifest.access.roles
    for kind, owner, name, empty in sql.windows_outside_log(ctx.store):
        if kind == "role":
            line, path = ctx.locate(("access", "actors", owner))
            what = f"actor {owner!r} holds role {name!r}"
        else:
            j = next((j for j, g in enumerate(roles[owner].subsystems) if g.name == name), 0) if owner in roles else 0
            line, path = ctx.locate(("access", "roles", owner, "subsystems", j))
            what = f"role {owner!r} is granted {name!r}"
        if empty:
            yield finding(
                "GE309",
                f"{what} in a window whose since is not before its until",
                file=ctx.manifest_file,
                line=line,
                path=path,
            )
        else:
            yield finding(
                "GE308", f"{what} only outside the span of the event log", file=ctx.manifest_file, line=line, path=path
            )
