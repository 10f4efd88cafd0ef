"""The regression gate: thresholds on a run (and its drop from a baseline) for CI.

Each check is one JUnit test case, so CI systems show which threshold broke. The drop
from a baseline is judged either by point estimates (:func:`gate_checks`) or, when both
runs have per-question scores, by a paired test over questions that fails only on a
drop that is both larger than the tolerance and significant (:func:`paired_drop_checks`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from ..scoring.model import RunReport


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    message: str


def integrity_checks(
    new: RunReport,
    *,
    run_status: str | None = None,
    run_message: str | None = None,
    allow_errors: bool = False,
    allow_empty: bool = False,
    missing: Sequence[str] | None = None,
) -> list[Check]:
    """What must hold before any threshold means something: something was scored at all, the
    run finished (``run.json``'s status, when known), every question of its set has a trace
    (``missing``, default the report's ``missing_question_ids``), no episode errored (the agent
    raised or timed out) and none was empty (no search or fetch, no answer). Each is a check only when
    it has something to say: a clean run gets none. ``allow_errors`` / ``allow_empty`` let them
    pass, saying so; a run with no score at all never passes."""
    checks = []
    n = new.overall.n
    if n == 0:
        checks.append(Check("run.scores", False, "the run holds no score: nothing was measured"))
    missing = new.missing_question_ids if missing is None else missing
    if missing:
        checks.append(
            _allowed(
                "run.missing_questions",
                f"{len(missing)} questions of the run's set have no trace (first: {sorted(missing)[0]}); "
                "nothing was measured on them",
                allow_errors,
                "--allow-errors",
            )
        )
    if run_status is not None and run_status != "completed":
        why = f": {run_message}" if run_message else ""
        checks.append(
            _allowed(
                "run.status",
                f"the run did not complete (run.json: {run_status}{why})",
                allow_errors,
                "--allow-errors",
            )
        )
    if new.errored_episodes:
        checks.append(
            _allowed(
                "run.errored_episodes",
                f"{new.errored_episodes} of {n} episodes errored (the agent raised or timed out); each scores 0",
                allow_errors,
                "--allow-errors",
            )
        )
    if new.empty_episodes:
        checks.append(
            _allowed(
                "run.empty_episodes",
                f"{new.empty_episodes} of {n} episodes are empty (no search or fetch and no answer); each scores 0",
                allow_empty,
                "--allow-empty",
            )
        )
    return checks


def _allowed(name: str, problem: str, allowed: bool, flag: str) -> Check:
    if allowed:
        return Check(name, True, f"{problem} (allowed by {flag})")
    return Check(name, False, f"{problem}; {flag} accepts it")


def gate_checks(
    new: RunReport,
    *,
    baseline: RunReport | None = None,
    min_adjusted: float | None = None,
    max_violation_rate: float | None = None,
    max_drop: float | None = None,
    allow_empty: bool = False,
) -> list[Check]:
    """Overall thresholds, plus a per-track drop check against the baseline (a
    regression in one track must not hide behind gains in another). A violation-rate
    check on a run of compliance tier ``no_evidence`` (no tool call — none in zero-shot
    mode, no citation in context mode — or no answer) fails: v = 0 then proves nothing, unless ``allow_empty``."""
    checks = []
    o = new.overall
    if min_adjusted is not None:
        ok = o.run_s_adj >= min_adjusted - 1e-12
        checks.append(
            Check(
                "overall.min_adjusted",
                ok,
                f"run S_adj {o.run_s_adj:.4f} {'>=' if ok else '<'} minimum {min_adjusted:.4f}",
            )
        )
    if max_violation_rate is not None and o.compliance_tier == "no_evidence":
        checks.append(
            _allowed(
                "overall.max_violation_rate",
                f"nothing to judge: violation rate {o.run_violation_rate:.4f} ({o.v_bad} of {o.v_units} calls "
                "flagged) proves nothing in a run with no tool call (zero-shot: none; context mode: no "
                "citation) or no answer (compliance tier no_evidence)",
                allow_empty,
                "--allow-empty",
            )
        )
    elif max_violation_rate is not None:
        ok = o.run_violation_rate <= max_violation_rate + 1e-12
        checks.append(
            Check(
                "overall.max_violation_rate",
                ok,
                f"violation rate {o.run_violation_rate:.4f} ({o.v_bad} of {o.v_units} calls flagged) "
                f"{'<=' if ok else '>'} maximum {max_violation_rate:.4f}",
            )
        )
    if baseline is not None and max_drop is not None and baseline.overall.n == 0:  # a drop from nothing says nothing
        checks.append(Check("overall.max_drop", False, "the baseline holds no score: nothing to compare against"))
    elif baseline is not None and max_drop is not None:
        pairs = [("overall", baseline.overall, o)]
        pairs += [(t, baseline.tracks[t], new.tracks[t]) for t in new.tracks if t in baseline.tracks]
        for name, gb, gn in pairs:
            drop = gb.run_s_adj - gn.run_s_adj
            ok = drop <= max_drop + 1e-12
            checks.append(
                Check(
                    f"{name}.max_drop",
                    ok,
                    f"{name} run S_adj {gb.run_s_adj:.4f} → {gn.run_s_adj:.4f} (drop {drop:+.4f}) "
                    f"{'within' if ok else 'exceeds'} allowed drop {max_drop:.4f}",
                )
            )
    return checks


def paired_drop_checks(
    base_scores: Sequence[Any],
    new_scores: Sequence[Any],
    *,
    max_drop: float,
    alpha: float = 0.05,
    samples: int = 10000,
    seed: int = 0,
) -> list[Check]:
    """The variance-aware drop checks: overall and per track, the mean per-question S_adj
    (averaged over trials) of the two runs compared paired over their common questions
    (``groundeval.report.significance``). A check fails only when the drop is larger than
    ``max_drop`` and significant; ``alpha`` is the gate's false-failure rate, split over
    the checks (Bonferroni: each of the m checks is tested at alpha / m)."""
    from ..tracks import names
    from .significance import describe, paired_test, per_question

    known = names()
    tracks = sorted(
        {s.track for s in new_scores} & {s.track for s in base_scores},
        key=lambda t: (known.index(t) if t in known else len(known), t),
    )
    slices: list[tuple[str, str | None]] = [("overall", None)] + [(t, t) for t in tracks]
    level = alpha / len(slices)
    checks = []
    for name, track in slices:
        result = paired_test(
            per_question(base_scores, track), per_question(new_scores, track), samples=samples, seed=seed
        )
        if track is None and result.n == 0:  # a test over no pair says nothing, least of all "no drop"
            checks.append(
                Check(
                    "overall.max_drop",
                    False,
                    "no question in common with the baseline: nothing to compare (a baseline of another "
                    "pack or question set?)",
                )
            )
            break  # nor can any track's
        ok, message = describe(name, result, tolerance=max_drop, alpha=level)
        checks.append(Check(f"{name}.max_drop", ok, message))
    return checks


def junit_xml(checks: list[Check], suite: str = "groundeval.gate") -> str:
    failures = sum(not c.passed for c in checks)
    root = ET.Element("testsuites", name=suite, tests=str(len(checks)), failures=str(failures))
    ts = ET.SubElement(
        root, "testsuite", name=suite, tests=str(len(checks)), failures=str(failures), errors="0", skipped="0"
    )
    for c in checks:
        case = ET.SubElement(ts, "testcase", classname=suite, name=c.name)
        if c.passed:
            ET.SubElement(case, "system-out").text = c.message
        else:
            ET.SubElement(case, "failure", message=c.message, type="threshold").text = c.message
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(checks: list[Check], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(checks), encoding="utf-8")
    return path
