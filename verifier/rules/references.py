"""Level 2 — references: every name the contract uses points at something that exists.

Actors, roles, event types, join paths, artifact ids and subsystems are checked
across the manifest and the loaded records (SQL in ``verifier/sql.py``).
"""

from __future__ import annotations

from typing import Iterable

from groundeval.contract.paths import json_paths

from .. import sql
from ..context import PackContext
from .registry import check, define, finding

define(
    "GE201",
    "references",
    2,
    "warning",
    "actor not declared",
    "An actor in events without a role can never be asked about and sees nothing.",
    "Declare the actor under access.actors with a role (an `external: true` role for outsiders).",
)
define(
    "GE202",
    "references",
    2,
    "error",
    "role not defined",
    "An actor or restriction names a role that access.roles does not define, so it grants nothing.",
    "Define the role under access.roles or fix the spelling.",
)
define(
    "GE203",
    "references",
    2,
    "error",
    "event type not in the log",
    "A spec (or broadcast) names an event type that never occurs, so it can never produce a question.",
    "Fix the type name to one that occurs in the log (see `groundeval info PACK`).",
)
define(
    "GE204",
    "references",
    2,
    "error",
    "path never resolves",
    "A join or match path that resolves on no event of its type can never link anything.",
    "Use a dotted path present on those events, e.g. facts.incident_id.",
)
define(
    "GE205",
    "references",
    2,
    "error",
    "referenced artifact missing",
    "Events cite an artifact id the corpus lacks; questions built on it point at nothing.",
    "Add the artifact to the corpus or fix the id in the events.",
)
define(
    "GE206",
    "references",
    2,
    "error",
    "duplicate artifact id",
    "Two artifacts with one id: which one an agent fetches would be arbitrary.",
    "Give each artifact a unique id (the `id` field, else the file name).",
)
define(
    "GE207",
    "references",
    2,
    "error",
    "artifact has no creation time",
    "Without a creation time the horizon gate can never admit the artifact.",
    "Add `timestamp` (or `created_at` / `date`) to the artifact.",
)
define(
    "GE208",
    "references",
    2,
    "warning",
    "granted subsystem has no artifacts",
    "A role is granted a subsystem the corpus does not contain — usually a typo.",
    "Fix the subsystem name to one in the corpus, or remove the grant.",
)
define(
    "GE209",
    "references",
    2,
    "error",
    "search-space subsystem has no artifacts",
    "A silence pair expects responses in a subsystem the corpus does not contain.",
    "Use a subsystem that exists in the corpus.",
)
define(
    "GE210",
    "references",
    2,
    "error",
    "bad Perspective actor",
    "perspective_actors must be declared, non-system actors so questions can be asked about them.",
    "Declare the actor or remove it from evaluation.perspective_actors.",
)
define(
    "GE212",
    "references",
    2,
    "warning",
    "restriction names an unknown artifact",
    "A restriction for an id the corpus lacks protects nothing — often a typo that leaves the real one open.",
    "Fix the artifact id in access.restrictions.",
)
define(
    "GE213",
    "references",
    2,
    "warning",
    "visibility names an unknown actor",
    "A restriction listing an undeclared actor admits nobody by that name.",
    "Declare the actor or fix the spelling.",
)


@check("GE201", needs=("manifest", "store"))
def undeclared_actors(ctx: PackContext) -> Iterable:
    for actor, n, file, line, event_id in sql.undeclared_actors(ctx.store):
        yield finding(
            "GE201",
            f"actor {actor!r} appears in {n} event(s) but is not declared",
            file=file,
            line=line,
            record=event_id,
            path="$.actors",
        )


@check("GE202", "GE210", "GE212", "GE213", needs=("manifest", "store"))
def policy_names(ctx: PackContext) -> Iterable:
    access = ctx.manifest.access
    roles = set(access.roles)
    for actor, spec in sorted(access.actors.items()):
        for i, window in enumerate(spec.roles):
            if window.role not in roles:
                line, path = ctx.locate(("access", "actors", actor))
                yield finding(
                    "GE202",
                    f"actor {actor!r} holds undefined role {window.role!r}",
                    file=ctx.manifest_file,
                    line=line,
                    path=f"{path}.roles[{i}].role",
                )
    artifacts = sql.known_artifacts(ctx.store, sorted(access.restrictions))
    yield from _restriction_names(ctx, roles, artifacts)
    for aid, role, file, line in sql.inline_visibility_roles(ctx.store):
        if role not in roles:
            yield finding(
                "GE202",
                f"visibility of {aid!r} names undefined role {role!r}",
                file=file,
                line=line,
                record=aid,
                path="$.visibility.roles",
            )
    for aid, actor, file, line in sql.inline_visibility_actors(ctx.store):
        if actor not in access.actors:
            yield finding(
                "GE213",
                f"visibility of {aid!r} names undeclared actor {actor!r}",
                file=file,
                line=line,
                record=aid,
                path="$.visibility.actors",
            )
    for i, actor in enumerate(ctx.manifest.evaluation.perspective_actors):
        spec = access.actors.get(actor)
        problem = "is not declared" if spec is None else "is a system actor" if spec.system else None
        if problem:
            line, path = ctx.locate(("evaluation", "perspective_actors", i))
            yield finding(
                "GE210", f"Perspective actor {actor!r} {problem}", file=ctx.manifest_file, line=line, path=path
            )


def _restriction_names(ctx: PackContext, roles: set[str], artifacts: set[str]) -> Iterable:
    """GE212/GE202/GE213 of the manifest's restrictions: each names a known artifact (``artifacts``:
    those of the restrictions' names the store holds), defined roles and declared actors (part of
    :func:`policy_names`, apart to keep it short)."""
    access = ctx.manifest.access
    for aid, vis in sorted(access.restrictions.items()):
        line, path = ctx.locate(("access", "restrictions", aid))
        if aid not in artifacts:
            yield finding(
                "GE212", f"restriction for unknown artifact {aid!r}", file=ctx.manifest_file, line=line, path=path
            )
        for role in vis.roles:
            if role not in roles:
                yield finding(
                    "GE202",
                    f"restriction of {aid!r} names undefined role {role!r}",
                    file=ctx.manifest_file,
                    line=line,
                    path=f"{path}.roles",
                )
        for actor in vis.actors:
            if actor not in access.actors:
                yield finding(
                    "GE213",
                    f"restriction of {aid!r} names undeclared actor {actor!r}",
                    file=ctx.manifest_file,
                    line=line,
                    path=f"{path}.actors",
                )


def spec_paths(ctx: PackContext) -> Iterable[tuple[tuple, str, str, str]]:
    """(manifest location, event type, dotted path, label) of every join and match path."""
    ev = ctx.manifest.evaluation
    for i, spec in enumerate(ev.causal_links):
        base = ("evaluation", "causal_links", i)
        for j, join in enumerate(spec.join):
            yield base + ("join", j, "cause"), spec.cause_event_type, join.cause, f"{spec.name}: cause join"
            yield base + ("join", j, "effect"), spec.effect_event_type, join.effect, f"{spec.name}: effect join"
        if spec.match_field:
            yield base + ("match_field",), spec.cause_event_type, spec.match_field, f"{spec.name}: match_field"
    for i, spec in enumerate(ev.silence_pairs):
        base = ("evaluation", "silence_pairs", i)
        for j, join in enumerate(spec.join):
            yield base + ("join", j, "trigger"), spec.trigger_event_type, join.trigger, f"{spec.key}: trigger join"
            yield (
                base + ("join", j, "response"),
                spec.response_event_type,
                join.response,
                f"{spec.key}: response join",
            )
        if spec.match_field:
            yield base + ("match_field",), spec.trigger_event_type, spec.match_field, f"{spec.key}: match_field"


def spec_event_types(ctx: PackContext) -> Iterable[tuple[tuple, str, str]]:
    """(manifest location, event type, severity) of every event type the manifest names."""
    ev = ctx.manifest.evaluation
    for i, spec in enumerate(ev.causal_links):
        for side in ("cause_event_type", "effect_event_type"):
            yield ("evaluation", "causal_links", i, side), getattr(spec, side), "error"
    for i, spec in enumerate(ev.silence_pairs):
        yield ("evaluation", "silence_pairs", i, "trigger_event_type"), spec.trigger_event_type, "error"
        # A response type may legitimately never occur (nothing was ever answered): the graph rules judge it.
    for role, spec in sorted(ctx.manifest.access.roles.items()):
        for j, etype in enumerate(spec.broadcast_event_types):
            yield ("access", "roles", role, "broadcast_event_types", j), etype, "warning"


# The original format accepted these specs, and nothing wrong is derived from them (a trigger
# without its join key is set aside; an empty subsystem adds nothing to a search space), so an
# original config.yaml gets a warning where a native manifest gets an error.
_ORIGINAL_TOLERATED = " (a warning in an original config.yaml, which accepted it: no question comes from it)"
_ORIGINAL_EMPTY = " (a warning in an original config.yaml, which accepted it: it adds nothing to the search space)"


@check("GE203", "GE204", needs=("manifest", "store"))
def spec_references(ctx: PackContext) -> Iterable:
    types = sql.event_type_counts(ctx.store)
    for loc, etype, severity in spec_event_types(ctx):
        if etype not in types:
            line, path = ctx.locate(loc)
            yield finding(
                "GE203",
                f"event type {etype!r} never occurs in the log",
                severity=severity,
                file=ctx.manifest_file,
                line=line,
                path=path,
            )
    specs, pairs = [], {}  # every distinct (type, path) counted in one query
    for loc, etype, dotted, label in spec_paths(ctx):
        if etype not in types:
            continue
        try:
            paths = json_paths(dotted)
        except ValueError as exc:
            specs.append((loc, etype, dotted, label, exc))
            continue
        specs.append((loc, etype, dotted, label, pairs.setdefault((etype, tuple(paths)), len(pairs))))
    counts = sql.path_coverages(ctx.store, [(t, list(p)) for t, p in pairs])
    for loc, etype, dotted, label, k in specs:
        line, path = ctx.locate(loc)
        if isinstance(k, ValueError):
            yield finding("GE204", f"{label}: {k}", file=ctx.manifest_file, line=line, path=path)
            continue
        total, hits = counts[k]
        if hits == 0:
            yield finding(
                "GE204",
                f"{label}: {dotted!r} resolves on none of the {total} {etype!r} events"
                + _ORIGINAL_TOLERATED * ctx.legacy,
                severity="warning" if ctx.legacy else None,
                file=ctx.manifest_file,
                line=line,
                path=path,
            )


@check("GE205", "GE207", needs=("store",))
def artifact_references(ctx: PackContext) -> Iterable:
    yield from _original_missing(ctx) if ctx.legacy else _native_missing(ctx)
    for aid, file, line in sql.undated_artifacts(ctx.store):
        yield finding(
            "GE207", f"artifact {aid!r} has no timestamp, created_at or date", file=file, line=line, record=aid
        )


def _original_missing(ctx: PackContext) -> Iterable:
    """GE205 of an original config.yaml, one finding per ``artifact_ids`` key: the original
    accepts references the export lacks (real exports always have some), and keys that are not
    subsystems (a join key kept beside the references). Such ids are never evidence nor in a
    search space; they still join. A subsystem's key: a warning (dangling references, counted);
    any other key: an info (identifiers, not references)."""
    for key, is_subsystem, ids, n, example, file, line, event_id in sql.missing_artifacts_by_key(ctx.store):
        if is_subsystem:
            message = (
                f"artifact_ids.{key}: {n} reference(s) to {ids} artifact(s) missing from the corpus "
                f"(dangling, e.g. {example!r}); never evidence, still joinable"
                " (a warning in an original config.yaml, which accepted them)"
            )
        else:
            message = (
                f"artifact_ids.{key} is not a subsystem of the corpus: {ids} of its value(s) ({n} reference(s), "
                f"e.g. {example!r}) name no artifact and are read as identifiers (joinable, never evidence)"
            )
        yield finding(
            "GE205",
            message,
            severity="warning" if is_subsystem else "info",
            file=file,
            line=line,
            record=event_id,
            path=f"$.artifact_ids.{key}",
        )


def _native_missing(ctx: PackContext) -> Iterable:
    for aid, n, file, line, event_id in sql.missing_artifacts(ctx.store):
        yield finding(
            "GE205",
            f"artifact {aid!r} is referenced {n} time(s) but not in the corpus",
            file=file,
            line=line,
            record=event_id,
            path="$.artifact_ids",
        )


@check("GE206", needs=("sources",))
def duplicate_artifacts(ctx: PackContext) -> Iterable:
    first: dict[str, object] = {}
    for rec, ident in ctx.artifact_ids() if ctx.artifact_ids_repeat() else ():  # none repeats: nothing to report
        prev = first.setdefault(ident, rec)
        if prev is not rec:
            where = prev.file + (f":{prev.line}" if prev.line is not None else "")
            yield finding(
                "GE206",
                f"artifact id {ident!r} also used by {where}",
                file=rec.file,
                line=rec.line,
                record=ident,
                path="$.id",
            )


@check("GE208", "GE209", needs=("manifest", "store"))
def subsystem_references(ctx: PackContext) -> Iterable:
    corpus = sql.corpus_subsystems(ctx.store)
    for role, spec in sorted(ctx.manifest.access.roles.items()):
        for j, grant in enumerate(spec.subsystems):
            if grant.name not in corpus:
                line, path = ctx.locate(("access", "roles", role, "subsystems", j))
                yield finding(
                    "GE208",
                    f"role {role!r} is granted {grant.name!r}, which has no artifacts",
                    file=ctx.manifest_file,
                    line=line,
                    path=path,
                )
    for i, spec in enumerate(ctx.manifest.evaluation.silence_pairs):
        used = [(("search_space_subsystems", j), s) for j, s in enumerate(spec.search_space_subsystems)]
        used += [
            (("search_space_selectors", j, "subsystem"), s.subsystem) for j, s in enumerate(spec.search_space_selectors)
        ]
        for sub_loc, name in used:
            if name not in corpus:
                line, path = ctx.locate(("evaluation", "silence_pairs", i) + sub_loc)
                yield finding(
                    "GE209",
                    f"{spec.key}: subsystem {name!r} has no artifacts" + _ORIGINAL_EMPTY * ctx.legacy,
                    severity="warning" if ctx.legacy else None,
                    file=ctx.manifest_file,
                    line=line,
                    path=path,
                )
