"""Drift: what changed since a saved verification (the baseline).

The facts compared are the contract's coverage — event types, specs, roles,
grants, subsystems, Perspective actors, generated questions per track — plus
counts and the digest. Anything the baseline had and the pack no longer has is
*removed coverage* (GE501); every other difference is informational (GE502).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groundeval.errors import ContractError

from .model import Finding, VerificationResult
from .rules.registry import define, finding

define(
    "GE501",
    "drift",
    1,
    "warning",
    "coverage removed since the baseline",
    "Something the baseline covered (an event type, spec, role, grant, track) is gone: questions silently drop.",
    "Restore it, or accept the change by saving a new baseline (--save-baseline).",
)
define(
    "GE502",
    "drift",
    1,
    "info",
    "changed since the baseline",
    "The contract changed since the baseline; scores are comparable only with care.",
    "Nothing to fix if intended; save a new baseline to acknowledge it.",
)

# Facts compared as sets (removal = lost coverage) and as counts.
SET_FACTS = ("event_types", "causal_links", "silence_pairs", "roles", "grants", "subsystems", "perspective_actors")
COUNT_FACTS = ("events", "artifacts", "actors")


def facts_of(ctx) -> dict[str, Any]:
    """The comparable facts of a verified pack (empty parts when they could not be read)."""
    from . import sql

    out: dict[str, Any] = {}
    m = ctx.manifest
    if m is not None:
        out["causal_links"] = sorted(s.name for s in m.evaluation.causal_links)
        out["silence_pairs"] = sorted(s.key for s in m.evaluation.silence_pairs)
        out["roles"] = sorted(m.access.roles)
        out["perspective_actors"] = sorted(m.evaluation.perspective_actors)
    if ctx.store is not None:
        out.update(sql.facts(ctx.store))
        out["digest"] = ctx.store.digest
    gen = ctx.stats.get("generation")
    if gen:
        out["questions"] = dict(gen["tracks"])
    return out


def load_baseline(path: str | Path) -> dict[str, Any]:
    """The facts of a saved verification (``--format json`` / ``--save-baseline`` output)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ContractError.single(str(p), f"cannot read baseline: {exc.strerror}") from None
    except ValueError as exc:
        raise ContractError.single(str(p), f"baseline is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("facts"), dict):
        raise ContractError.single(
            str(p), "not a saved verification: expected a JSON object with 'facts'", field="facts"
        )
    return data["facts"]


def _names(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return {str(v): None for v in value}
    return {}


def compare(before: dict[str, Any], after: dict[str, Any], where: str | None = None) -> list[Finding]:
    """Findings for every difference between two fact sets, sorted."""
    out: list[Finding] = []
    for key in SET_FACTS:
        if key not in before or key not in after:
            continue
        old, new = _names(before[key]), _names(after[key])
        for name in sorted(set(old) - set(new)):
            out.append(finding("GE501", f"{key}: {name!r} removed", file=where))
        for name in sorted(set(new) - set(old)):
            out.append(finding("GE502", f"{key}: {name!r} added", file=where))
        for name in sorted(set(old) & set(new)):
            if old[name] != new[name]:
                out.append(finding("GE502", f"{key}: {name!r} {old[name]} -> {new[name]}", file=where))
    for key in COUNT_FACTS:
        if key in before and key in after and before[key] != after[key]:
            out.append(finding("GE502", f"{key}: {before[key]} -> {after[key]}", file=where))
    if "questions" in before and "questions" in after:
        for track in sorted(before["questions"]):
            old, new = before["questions"][track], after["questions"].get(track, 0)
            if old and not new:
                out.append(finding("GE501", f"questions: track {track!r} had {old}, now none", file=where))
            elif old != new:
                out.append(finding("GE502", f"questions: track {track!r} {old} -> {new}", file=where))
    if before.get("digest") and after.get("digest") and before["digest"] != after["digest"]:
        out.append(finding("GE502", f"digest: {before['digest'][:12]} -> {after['digest'][:12]}", file=where))
    return sorted(out, key=Finding.sort_key)


def apply_baseline(result: VerificationResult, baseline: dict[str, Any]) -> list[Finding]:
    """Add drift findings to ``result``; returns them."""
    drift = compare(baseline, result.facts, where=result.manifest)
    result.findings = sorted(result.findings + drift, key=Finding.sort_key)
    result.rules_run = sorted(set(result.rules_run) | {"GE501", "GE502"})
    return drift
