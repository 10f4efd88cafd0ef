"""Level 4 — dry run: generate the questions once and report what came out.

Uses the real generator (``groundeval.questions.generate``), so the statistics are
exactly what ``groundeval generate`` would write; when the generator is missing the
level degrades to one info finding.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Iterable

from groundeval.errors import ContractError
from groundeval.tracks import get as get_track
from groundeval.tracks import is_registered, names, tracks

from ..context import PackContext
from .registry import check, define, finding

define(
    "GE401",
    "dryrun",
    4,
    "info",
    "generation statistics",
    "How many questions each track and bucket yields, to compare with what was asked for.",
    "Nothing to fix; raise the caps or add events if a track is thinner than you want.",
)
define(
    "GE402",
    "dryrun",
    4,
    "warning",
    "shortcut audit",
    "Questions answerable without the evidence (from the text alone) measure guessing, not grounding.",
    "A surface feature predicts the label: vary the templates or the labels so the question text does not "
    "give the answer away. (A skewed label split gets its own fix, naming what yielded no question.)",
)
define(
    "GE403",
    "dryrun",
    4,
    "warning",
    "track yields no questions",
    "A track the contract configures produced no question, so its score would be undefined.",
    "The message names why each candidate was set aside and what to change; level 3 findings say more.",
)
define(
    "GE404",
    "dryrun",
    4,
    "warning",
    "Perspective bucket empty after generation",
    "A requested Perspective bucket has no question, so the balance is not what was asked for.",
    "Adjust evaluation.perspective shares or the access policy.",
)
define(
    "GE405",
    "dryrun",
    4,
    "info",
    "dry run unavailable",
    "The question generator is not installed or not importable here.",
    "Install groundeval with the question generator to run level 4.",
)
define(
    "GE406",
    "dryrun",
    4,
    "error",
    "generation failed",
    "The generator rejected the contract, so `groundeval generate` would fail too.",
    "Fix the problem the message names.",
)
define(
    "GE407",
    "dryrun",
    4,
    "error",
    "question text gives the answer away",
    "An answer-blind strategy (a naive Bayes over the question text, a fixed rule such as 'yes iff the text "
    "repeats an identifier', or a majority per actor/event type/template) answers a track better than "
    "evaluation.shortcut_limit: its score measures guessing, not grounding.",
    "Reword the track's templates or subject references so the named strategy has nothing to read "
    "(the message says what it reads), then run `groundeval verify --level 4` again.",
)
define(
    "GE409",
    "dryrun",
    4,
    "info",
    "track below its cap, candidates set aside",
    "A track yielded fewer questions than its cap while candidates were set aside; the reasons say what kept them out.",
    "The message names the reasons with their counts and the change that would admit them.",
)
define(
    "GE410",
    "dryrun",
    4,
    "warning",
    "ambiguous absences set aside",
    "A trigger without its joined response is a verified absence only if nothing in its window or its expected "
    "search space could be the response; an event of the response type there that lacks the join key, or names "
    "the trigger's key only in its text, would make a 'no' label false on its face, so the trigger is set aside.",
    "Give such responses the join key of the trigger they answer (or the key of their own trigger), so the log "
    "says which trigger each one answers.",
)
define(
    "GE411",
    "dryrun",
    4,
    "warning",
    "one-sided track",
    "Every question of the track has the same label, so a constant answer scores 1 and the track measures "
    "nothing; the message says why the other label has no question (nothing in the log yields it, or its "
    "candidates were set aside, and why).",
    "Add events that yield the missing label (the message names what such an event is), or change the "
    "requested shares.",
)
define(
    "GE412",
    "dryrun",
    4,
    "info",
    "under-filled track",
    "A track with fewer questions than evaluation.shortcut_min_questions cannot be judged for shortcuts and "
    "gives a noisy score; the message says what the log yields for it.",
    "Add events of the track's specs (or raise its caps) for a judgeable set; or lower "
    "evaluation.shortcut_min_questions.",
)
define(
    "GE408",
    "dryrun",
    4,
    "info",
    "shortcut audit not judged (too few questions)",
    "A track with fewer than evaluation.shortcut_min_questions questions is too small for its shortcut "
    "accuracy to mean much; one beyond the limit is noted, not judged.",
    "Add events or raise the track's caps for a judgeable set; or lower evaluation.shortcut_min_questions.",
)


def generation_stats(questions: list[Any]) -> dict[str, Any]:
    """Counts per track, per track/bucket and per track/difficulty (sorted keys; every
    registered track, in registry order)."""
    per_track = Counter(q.track for q in questions)
    buckets = Counter((q.track, q.bucket) for q in questions)
    diff = Counter((q.track, q.difficulty) for q in questions)
    order = names()
    return {
        "total": len(questions),
        "tracks": {t: per_track[t] for t in order},
        "buckets": {t: {b: n for (tt, b), n in sorted(buckets.items()) if tt == t} for t in order},
        "difficulty": {t: {d: n for (tt, d), n in sorted(diff.items()) if tt == t} for t in order},
    }


# A surface feature "predicts" the label when its in-sample majority beats the better constant
# answer by this margin on a track with enough questions (small groups are always near 1.0).
FEATURE_MARGIN = 0.25
MIN_QUESTIONS = 20
# Constant answers may beat the requested label balance by at most this much.
BALANCE_MARGIN = 0.15
FEATURES = ("majority_per_actor", "majority_per_event_type", "majority_per_template")


# What to change when a strategy reads the answer off the question (GE407).
STRATEGY_FIX = {
    "naive_bayes": "words or id shapes of the text predict the label: use the same wording for yes and no",
    "majority_per_event_type_template": "(event type, template) pairs predict the label: pair yes and no "
    "questions on each template",
    "shared_identifier": "a repeated identifier (or two with one number) predicts the label: do not let the "
    "question name both sides of the link it asks about by one id",
    "always_yes": "the label split is skewed: balance the buckets",
    "always_no": "the label split is skewed: balance the buckets",
    "majority_per_actor": "the actor predicts the label: balance labels per actor",
    "majority_per_event_type": "the event type predicts the label: balance labels per event type",
    "majority_per_template": "the template predicts the label: pair yes and no questions on each template",
}


def shortcut_findings(
    audit: dict[str, Any],
    ctx: PackContext | None = None,
    *,
    limit: float | None = None,
    min_questions: int | None = None,
    wanted_yes: dict[str, float] | None = None,
) -> list:
    """GE407 (error) for each track whose best shortcut beats the limit with enough questions,
    GE408 (info) when it does with fewer; nothing below the limit. Thresholds come from the
    manifest's evaluation config unless given."""
    from groundeval.questions.audit import shortcut_problems

    ev = ctx.manifest.evaluation if ctx is not None else None
    limit = limit if limit is not None else (ev.shortcut_limit if ev is not None else 0.60)
    min_questions = (
        min_questions if min_questions is not None else (ev.shortcut_min_questions if ev is not None else 30)
    )
    if wanted_yes is None:
        wanted_yes = requested_yes(ctx) if ctx is not None else {}
    floor = {t: max(y, 1 - y) for t, y in wanted_yes.items()}
    file = ctx.manifest_file if ctx is not None else None
    out = []
    for track, kind, row in shortcut_problems(audit, limit=limit, min_questions=min_questions, floor=floor):
        s = row["best_strategy"]
        raised = f", raised from {limit:.2f} to the requested label split" if row["bar"] > limit + 1e-9 else ""
        head = (
            f"{track}: {s} answers {row[s]:.2f} of {row['questions']} question(s) without evidence "
            f"(limit {row['bar']:.2f}{raised})"
        )
        if kind == "over":
            out.append(finding("GE407", f"{head} — {STRATEGY_FIX.get(s, 'reword the questions')}", file=file))
        else:  # no figure: a few questions cannot support one (1.00 of 2 says nothing)
            n = row["questions"]
            out.append(
                finding(
                    "GE408",
                    f"{track}: {n} question(s) are too few for a shortcut figure; an answer-blind strategy "
                    f"reaches the limit ({row['bar']:.2f}) on them, which is not judged below {min_questions} "
                    "questions",
                    file=file,
                )
            )
    return out


def _graph_counts(ctx: PackContext) -> dict[str, Any]:
    graph = getattr(ctx, "graph", None)
    return dict(getattr(graph, "stats", None) or {})


def _one_sided(questions: list[Any], track: str) -> bool:
    if not is_registered(track):
        return False
    yes = get_track(track).yes_buckets
    return len({q.bucket in yes for q in questions if q.track == track}) == 1


def thin_tracks(ctx: PackContext, qs: Any, stats: dict[str, Any]) -> Iterable:
    """GE411 for a configured track whose questions all have one label, GE412 for one with fewer
    questions than ``evaluation.shortcut_min_questions``; each says why from the graph's counts
    and the candidates set aside."""
    ev = ctx.manifest.evaluation
    counts = _graph_counts(ctx)
    for spec in tracks():
        n = stats["tracks"].get(spec.name, 0)
        if not spec.configured(ev) or n == 0:
            continue  # GE403 says why a configured track has none
        mine = [q for q in qs.questions if q.track == spec.name]
        labels = {q.bucket in spec.yes_buckets for q in mine}
        why = set_aside(qs.metadata.skipped.get(spec.name))
        if len(labels) == 1:
            (have,) = labels
            key, nothing = getattr(spec, "label_sources", {}).get(not have, (None, None))
            if key is not None and counts.get(key) == 0:
                reason = nothing
            elif key is not None and key in counts:
                reason = f"the log has {counts[key]} {key.replace('_', ' ')} but none became a question{why or ''}"
            else:
                reason = f"no candidate of that label became a question{why or ''}"
            f = finding(
                "GE411",
                f"{spec.name}: all {n} question(s) are {'yes' if have else 'no'}: {reason}",
                file=ctx.manifest_file,
            )
            yield replace(f, hint=balance_fix(spec.name, qs.questions, ev))
        if n < ev.shortcut_min_questions:
            sources = getattr(spec, "label_sources", {})
            found = ", ".join(
                f"{counts[k]} {k.replace('_', ' ')}"
                for k, _ in (sources.get(x, (None, None)) for x in (False, True))
                if k in counts
            )
            yield finding(
                "GE412",
                f"{spec.name}: {n} question(s), fewer than the {ev.shortcut_min_questions} a shortcut audit needs"
                + (f"; the log yields {found}" if found else "")
                + (f" (cap {spec.cap(ev)})" if n >= spec.cap(ev) else "")
                + (why or ""),
                file=ctx.manifest_file,
            )


def requested_yes(ctx: PackContext) -> dict[str, float]:
    """Share of "yes" labels each track asked for."""
    ev = ctx.manifest.evaluation
    return {t.name: t.requested_yes(ev) for t in tracks()}


def audit_problems(audit: dict[str, Any], wanted_yes: dict[str, float]) -> list[str]:
    """Lines naming each shortcut the audit shows: a constant answer beating the requested balance,
    or a surface feature (actor, event type, template) predicting the label."""
    out: list[str] = []
    for track in sorted(audit):
        row = audit[track]
        if not isinstance(row, dict) or not row.get("questions"):
            continue
        constant = max(row.get("always_yes", 0), row.get("always_no", 0))
        yes = wanted_yes.get(track, 0.5)
        if constant > max(yes, 1 - yes) + BALANCE_MARGIN:
            out.append(
                f"{track}: answering always the same scores {constant:.2f} "
                f"(requested balance allows {max(yes, 1 - yes):.2f})"
            )
        if row["questions"] >= MIN_QUESTIONS:
            for feature in FEATURES:
                if row.get(feature, 0) >= constant + FEATURE_MARGIN:
                    out.append(
                        f"{track}: {feature} scores {row[feature]:.2f} against {constant:.2f} for a constant answer"
                    )
    return out


def balance_fix(track: str, questions: list[Any], ev: Any) -> str:
    """The fix for a track whose constant answer beats the requested label split (GE402), from
    its cause as the track names it (``Track.balance_fix``: the label, or the specs, that
    yielded no question). Rewording templates cannot help there, so the generic GE402 fix is
    not shown for it."""
    mine = [q for q in questions if q.track == track]
    fix = get_track(track).balance_fix(mine, ev) if is_registered(track) else None
    return fix or (
        f"{track}: one label has too few candidates for the requested split. Add events that yield the "
        "missing label (`groundeval verify --level 3` lists the specs and their pairs), or change the "
        "requested shares."
    )


# Why a candidate was set aside (``metadata.skipped``) and what would admit it.
SKIP_FIXES = {
    "ambiguous_reference": "its type, identifiers, actors (and time, where the track shows it) match other events "
    "too; give such events a distinguishing fact or artifact reference",
    "never_visible": "no role could ever see the target's records; grant the subsystem to a role or list actors",
    "mixed_horizon": "the target's records straddle the as-of, so neither label is clean (no fix needed)",
    "no_artifacts": "cause or effect references no artifact of the corpus; reference the documents they wrote",
    "no_response_artifacts": "the response references no artifact of the corpus; reference its document",
    "empty_search_space": "an honest 'no' would have nothing to check; add search_space selectors that resolve",
    "leakage": "the question text would contain an answer-side id or a mechanism word; rename the spec's aliases "
    "or keep answer ids out of the subject's facts",
    "duplicate": "two candidates gave the same question (no fix needed)",
    "actor_took_part": "the actor took part in the event by the as-of, so a 'could not have known' label would be "
    "false on its face (no fix needed)",
    "response_without_join_key": "an event of the response type in the window or the search space lacks the join "
    "key, so it could be this trigger's response; give it the key of the trigger it answers",
    "response_mentions_key": "an event of the response type in the window or the search space names the trigger's "
    "key in its text but joins elsewhere; fix its join key",
}


def set_aside(skipped) -> str:
    """``; set aside: reason n (fix), ...`` for a track's skip counts, or ``""``."""
    if not isinstance(skipped, dict) or not skipped:
        return ""
    parts = [f"{k} {v} ({SKIP_FIXES[k]})" if k in SKIP_FIXES else f"{k} {v}" for k, v in sorted(skipped.items())]
    return "; candidates set aside: " + "; ".join(parts)


@check(
    "GE401",
    "GE402",
    "GE403",
    "GE404",
    "GE405",
    "GE406",
    "GE407",
    "GE408",
    "GE409",
    "GE410",
    "GE411",
    "GE412",
    needs=("manifest", "store"),
)
def dry_run(ctx: PackContext) -> Iterable:
    try:
        from groundeval.questions.generate import generate
    except ImportError as exc:
        yield finding("GE405", f"question generator unavailable: {exc}")
        return
    ctx.settle()  # generation may rank by BM25: not over an index still being built beside
    try:
        qs = generate(ctx.store, graph=ctx.graph)  # the graph level 3 built (None: generate builds it)
    except ContractError as exc:
        for p in exc.problems:
            yield finding(
                "GE406", p.message, file=p.file, line=p.line, record=p.record, path=f"$.{p.field}" if p.field else None
            )
        return
    ctx.questions = qs
    stats = generation_stats(qs.questions)
    try:
        from groundeval.questions.audit import shortcut_audit

        audit = shortcut_audit(qs.questions)
    except ImportError:
        audit = qs.metadata.shortcut_audit
    stats["shortcut_audit"] = audit
    stats["balance"] = qs.metadata.balance
    stats["skipped"] = qs.metadata.skipped
    ctx.stats["generation"] = stats
    for track in names():
        buckets = ", ".join(f"{b} {n}" for b, n in stats["buckets"][track].items()) or "-"
        yield finding("GE401", f"{track}: {stats['tracks'][track]} question(s) ({buckets})")
    ev = ctx.manifest.evaluation
    for spec in tracks():
        track, cap = spec.name, spec.cap(ev)
        why = set_aside(qs.metadata.skipped.get(track))
        if spec.configured(ev) and stats["tracks"][track] == 0:
            yield finding("GE403", f"{track} is configured but generated no question{why}", file=ctx.manifest_file)
        elif spec.configured(ev) and why and stats["tracks"][track] < cap:
            yield finding(
                "GE409", f"{track}: {stats['tracks'][track]} of at most {cap} question(s){why}", file=ctx.manifest_file
            )
    yield from thin_tracks(ctx, qs, stats)
    for spec in tracks():
        yield from spec.dry_run_findings(ctx, stats)  # checks only one track knows about (e.g. GE404)
    for line in audit_problems(audit, requested_yes(ctx)):
        track = line.split(":", 1)[0]
        if audit[track].get("questions", 0) < ev.shortcut_min_questions or _one_sided(qs.questions, track):
            continue  # no figure n cannot support; a one-sided track is GE411's
        fix = balance_fix(track, qs.questions, ev) if "answering always the same" in line else None
        f = finding("GE402", line)
        yield replace(f, hint=fix) if fix else f
    yield from shortcut_findings(audit, ctx)
