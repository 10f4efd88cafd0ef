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


def gate_checks(
    new: RunReport,
    *,
    baseline: RunReport | None = None,
    min_adjusted: float | None = None,
    max_violation_rate: float | None = None,
    max_drop: float | None = None,
) -> list[Check]:
    """Overall thresholds, plus a per-track drop check against the baseline (a
    regression in one track must not hide behind gains in another)."""
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
    if max_violation_rate is not None:
        ok = o.run_violation_rate <= max_violation_rate + 1e-12
        checks.append(
            Check(
                "overall.max_violation_rate",
                ok,
                f"violation rate {o.run_violation_rate:.4f} ({o.v_bad} of {o.v_units} calls flagged) "
                f"{'<=' if ok else '>'} maximum {max_violation_rate:.4f}",
            )
        )
    if baseline is not None and max_drop is not None:
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
