"""Run the rules level by level and collect every finding in one pass.

A check that fails unexpectedly becomes a GE000 finding instead of an exception,
so a malformed contract always yields a report. Findings are capped per rule so
a systematic mistake (say, every actor undeclared) stays readable.
"""

from __future__ import annotations

import threading
import traceback
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groundeval.contract.manifest import find_manifest
from groundeval.errors import interrupted
from groundeval.store.store import Store

from .context import PackContext
from .model import LEVELS, Finding, VerificationResult
from .drift import facts_of
from .rules import load_all
from .rules.registry import CHECKS, RULES, define, finding

MAX_PER_RULE = 100

define(
    "GE000",
    "engine",
    1,
    "error",
    "verifier check failed",
    "A check met input it could not handle; the rest of the report is still valid.",
    "Report this as a verifier bug with the message; meanwhile fix the other findings.",
)
define(
    "GE001",
    "engine",
    1,
    "info",
    "checks skipped",
    "Later checks need a valid manifest or a loadable store; they are skipped rather than guessing.",
    "Fix the errors above and run the verifier again to see these checks.",
)


def _available(ctx: PackContext, need: str) -> bool:
    if need == "manifest":
        return ctx.manifest is not None
    if need == "store":
        return ctx.store is not None
    if need == "graph":
        return ctx.graph is not None
    if need == "sources":
        return ctx.events_path is not None and ctx.artifacts_path is not None
    raise ValueError(need)


def _cap(findings: list[Finding]) -> list[Finding]:
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_rule[f.rule].append(f)
    out: list[Finding] = []
    for rule_id in sorted(by_rule):
        group = sorted(by_rule[rule_id], key=Finding.sort_key)
        out += group[:MAX_PER_RULE]
        if len(group) > MAX_PER_RULE:
            worst = group[0].severity
            out.append(
                Finding(rule_id, worst, f"... and {len(group) - MAX_PER_RULE} more like these", hint=RULES[rule_id].fix)
            )
    return sorted(out, key=Finding.sort_key)


def _run(ctx: PackContext, chk: Any) -> tuple[str | None, list[Finding]]:
    """(the need the context lacks, or ``None`` when the check ran; its findings)."""
    missing = [n for n in chk.needs if not _available(ctx, n)]
    if missing:
        return missing[0], []
    try:
        return None, list(chk.fn(ctx))
    except Exception as exc:  # noqa: BLE001 - a check bug must not hide the other findings
        if interrupted(exc):  # Ctrl-C inside a query: stop, never a finding and a successful exit
            raise
        last = traceback.extract_tb(exc.__traceback__)[-1]
        return None, [
            finding("GE000", f"{chk.name}: {type(exc).__name__}: {exc} ({Path(last.filename).name}:{last.lineno})")
        ]


def _run_level(ctx: PackContext, checks: list[Any]) -> list[tuple[Any, str | None, list[Finding]]]:
    """Each check's outcome, in order. At a level with checks on the graph, the others run in a
    thread meanwhile: their SQL on the second core while building the graph holds this one."""
    graphless = [c for c in checks if "graph" not in c.needs]
    if not graphless or len(graphless) == len(checks):
        return [(c, *_run(ctx, c)) for c in checks]
    outcomes: dict[int, tuple[str | None, list[Finding]]] = {}
    beside = threading.Thread(target=lambda: outcomes.update((id(c), _run(ctx, c)) for c in graphless))
    beside.start()
    try:
        for c in checks:
            if "graph" in c.needs:
                outcomes[id(c)] = _run(ctx, c)
    finally:
        beside.join()
    return [(c, *outcomes[id(c)]) for c in checks]


def run_checks(ctx: PackContext, level: int) -> tuple[list[Finding], list[str]]:
    findings: list[Finding] = []
    ran: list[str] = []
    skipped: dict[str, list[str]] = defaultdict(list)
    for lvl in range(1, level + 1):
        if lvl == 2:
            try:
                for p in ctx.build_store():
                    findings.append(
                        finding("GE119", p.message, file=p.file, line=p.line, path=f"$.{p.field}" if p.field else None)
                    )
            except Exception as exc:  # noqa: BLE001 - reported, never raised
                if interrupted(exc):
                    raise
                findings.append(finding("GE000", f"could not load the store: {exc}"))
        for chk, missing, found in _run_level(ctx, [c for c in CHECKS if c.level == lvl]):
            if missing:
                skipped[missing] += chk.rules
                continue
            ran += chk.rules
            findings += found
        if lvl < level:
            ctx.release(lvl)
    for need, rules in sorted(skipped.items()):
        why = f": {ctx.graph_error}" if need == "graph" and ctx.graph_error else ""
        findings.append(
            finding("GE001", f"{len(rules)} rules skipped ({', '.join(sorted(rules))}): no usable {need}{why}")
        )
    return _cap(findings), sorted(set(ran))


def _open(pack_path: str | Path) -> Store | None:
    """``Store.open(pack, keep_rows=True)`` as every command that reads a pack opens it, or
    ``None`` when the loader refuses the pack (the lenient loader then reports every problem).
    On a clean pack the checks run on this store and its kept rows: one read of the sources
    and the loader's own build, instead of staging them again and building a second store."""
    try:
        return Store.open(pack_path, keep_rows=True)
    except Exception as exc:  # noqa: BLE001 - whatever the loader refuses, the lenient path reports it
        if interrupted(exc):
            raise
        return None


def verify(
    pack_path: str | Path,
    level: int = 4,
    *,
    store: Store | None = None,
    lenient: bool = False,
    beside: Callable[[Store], Any] | None = None,
) -> VerificationResult:
    """Verify a pack up to ``level`` (1 shape, 2 references, 3 semantics, 4 dry run).

    ``store`` may be a :meth:`Store.open` of the same pack: when every record passes
    the shape checks, levels 2+ run on it instead of loading the pack a second time
    (the caller keeps it open), and ``result.shared_store`` says so. Without one, levels
    2+ open the pack that way themselves (and close it), unless ``lenient``: then the
    records are read and the store built only by the lenient loader (the reference path;
    the same findings). At level 4, ``result.questions`` is the generated :class:`QuestionSet`.
    ``beside(store)``: work on the given ``store`` run in a thread while the checks run
    (:meth:`PackContext.settle` says when it is waited for); done when this returns.

    Raises :class:`groundeval.errors.ContractError` only when there is no pack to
    read (no such path, no manifest); every other problem is a finding.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {sorted(LEVELS)}")
    load_all()
    find_manifest(pack_path)  # no pack at all: the ContractError, before any loading
    own = _open(pack_path) if store is None and level >= 2 and not lenient else None
    try:
        result = _verify(pack_path, level, store if own is None else own, beside if own is None else None)
    finally:
        if own is not None:
            own.close()
    if own is not None:
        result.shared_store = False  # the store was this call's own, and is closed
    return result


def _verify(
    pack_path: str | Path, level: int, store: Store | None, beside: Callable[[Store], Any] | None
) -> VerificationResult:
    ctx = PackContext(pack_path, store=store, beside=beside)
    try:
        findings, ran = run_checks(ctx, level)
        facts = facts_of(ctx)
        stats = dict(getattr(ctx, "stats", {}))
    finally:
        ctx.close()
        if store is not None:
            store.drop_rows()  # rows a Store.open(keep_rows=True) kept for a context that did not take them
    return VerificationResult(
        pack=str(pack_path),
        level=level,
        findings=findings,
        facts=facts,
        stats=stats,
        rules_run=ran,
        manifest=ctx.manifest_file,
        questions=ctx.questions,
        shared_store=ctx.shared_store,
    )
