"""Level 4 — dry run: generate the questions once and report what came out.

Uses the real generator (``groundeval.questions.generate``), so the statistics are
exactly what ``groundeval generate`` would write; when the generator is missing the
level degrades to one info finding.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from groundeval.contract.models import TRACKS
from groundeval.errors import ContractError

from ..context import PackContext
from .registry import check, define, finding

define("GE401", "dryrun", 4, "info", "generation statistics",
       "How many questions each track and bucket yields, to compare with what was asked for.",
       "Nothing to fix; raise the caps or add events if a track is thinner than you want.")
define("GE402", "dryrun", 4, "warning", "shortcut audit",
       "Questions answerable without the evidence (from the text alone) measure guessing, not grounding.",
       "Vary the templates or the labels so the question text does not give the answer away.")
define("GE403", "dryrun", 4, "warning", "track yields no questions",
       "A track the contract configures produced no question, so its score would be undefined.",
       "Check the track's specs and caps; level 3 findings usually say why.")
define("GE404", "dryrun", 4, "warning", "Perspective bucket empty after generation",
       "A requested Perspective bucket has no question, so the balance is not what was asked for.",
       "Adjust evaluation.perspective shares or the access policy.")
define("GE405", "dryrun", 4, "info", "dry run unavailable",
       "The question generator is not installed or not importable here.",
       "Install groundeval with the question generator to run level 4.")
define("GE406", "dryrun", 4, "error", "generation failed",
       "The generator rejected the contract, so `groundeval generate` would fail too.",
       "Fix the problem the message names.")


def _configured(ctx: PackContext) -> dict[str, bool]:
    ev = ctx.manifest.evaluation
    return {
        "perspective": ev.max_perspective_questions > 0,
        "counterfactual": ev.max_counterfactual_questions > 0 and bool(ev.causal_links),
        "silence": ev.max_silence_questions > 0 and bool(ev.silence_pairs),
    }


def generation_stats(questions: list[Any]) -> dict[str, Any]:
    """Counts per track, per track/bucket and per track/difficulty (sorted keys)."""
    tracks = Counter(q.track for q in questions)
    buckets = Counter((q.track, q.bucket) for q in questions)
    diff = Counter((q.track, q.difficulty) for q in questions)
    return {
        "total": len(questions),
        "tracks": {t: tracks[t] for t in TRACKS},
        "buckets": {t: {b: n for (tt, b), n in sorted(buckets.items()) if tt == t} for t in TRACKS},
        "difficulty": {t: {d: n for (tt, d), n in sorted(diff.items()) if tt == t} for t in TRACKS},
    }


# A surface feature "predicts" the label when its in-sample majority beats the better constant
# answer by this margin on a track with enough questions (small groups are always near 1.0).
FEATURE_MARGIN = 0.25
MIN_QUESTIONS = 20
# Constant answers may beat the requested label balance by at most this much.
BALANCE_MARGIN = 0.15
FEATURES = ("majority_per_actor", "majority_per_event_type", "majority_per_template")


def requested_yes(ctx: PackContext) -> dict[str, float]:
    """Share of "yes" labels each track asked for."""
    ev = ctx.manifest.evaluation
    p = ev.perspective
    total = p.positive + p.negative_permission + p.negative_temporal
    return {"perspective": p.positive / total if total else 0.5,
            "counterfactual": 1 - ev.counterfactual_negative_ratio, "silence": 0.5}


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
            out.append(f"{track}: answering always the same scores {constant:.2f} "
                       f"(requested balance allows {max(yes, 1 - yes):.2f})")
        if row["questions"] >= MIN_QUESTIONS:
            for feature in FEATURES:
                if row.get(feature, 0) >= constant + FEATURE_MARGIN:
                    out.append(f"{track}: {feature} scores {row[feature]:.2f} against {constant:.2f} "
                               f"for a constant answer")
    return out


@check("GE401", "GE402", "GE403", "GE404", "GE405", "GE406", needs=("manifest", "store"))
def dry_run(ctx: PackContext) -> Iterable:
    try:
        from groundeval.questions.generate import generate
    except ImportError as exc:
        yield finding("GE405", f"question generator unavailable: {exc}")
        return
    try:
        qs = generate(ctx.store, graph=ctx.graph)  # the graph level 3 built (None: generate builds it)
    except ContractError as exc:
        for p in exc.problems:
            yield finding("GE406", p.message, file=p.file, line=p.line, record=p.record,
                          path=f"$.{p.field}" if p.field else None)
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
    for track in TRACKS:
        buckets = ", ".join(f"{b} {n}" for b, n in stats["buckets"][track].items()) or "-"
        yield finding("GE401", f"{track}: {stats['tracks'][track]} question(s) ({buckets})")
    configured = _configured(ctx)
    for track in TRACKS:
        if configured[track] and stats["tracks"][track] == 0:
            why = qs.metadata.skipped.get(track)
            why = "; candidates set aside: " + ", ".join(f"{k} {v}" for k, v in sorted(why.items())) \
                if isinstance(why, dict) and why else ""
            yield finding("GE403", f"{track} is configured but generated no question{why}", file=ctx.manifest_file)
    if stats["tracks"]["perspective"]:
        cfg = ctx.manifest.evaluation.perspective
        for bucket in ("positive", "negative_permission", "negative_temporal"):
            if getattr(cfg, bucket) > 0 and not stats["buckets"]["perspective"].get(bucket):
                line, path = ctx.locate(("evaluation", "perspective", bucket))
                yield finding("GE404", f"no {bucket} Perspective question (share {getattr(cfg, bucket):g})",
                              file=ctx.manifest_file, line=line, path=path)
    for line in audit_problems(audit, requested_yes(ctx)):
        yield finding("GE402", line)
