"""Comparing two runs question by question: deltas, newly failing, fixed, new violations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..scoring.model import QuestionScore, RunReport

EPS = 1e-9


def _by_id(scores: Sequence[QuestionScore]) -> dict[str, QuestionScore]:
    """One score per question: the first trial's when a run repeated its questions
    (``gate`` compares repeated runs on all their trials)."""
    out: dict[str, QuestionScore] = {}
    for s in sorted(scores, key=lambda s: (s.question_id, s.agent or "", s.mode, s.trial)):
        out.setdefault(s.question_id, s)
    return out


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(b - a, 10)


def compare(
    base: Sequence[QuestionScore], new: Sequence[QuestionScore], base_report: RunReport, new_report: RunReport
) -> dict[str, Any]:
    """A deterministic, JSON-ready diff of two scored runs of the same questions."""
    b, n = _by_id(base), _by_id(new)
    common = sorted(set(b) & set(n))
    per_question = []
    newly_failing, fixed, new_violations = [], [], []
    for qid in common:
        x, y = b[qid], n[qid]
        row = {
            "question_id": qid,
            "track": y.track,
            "bucket": y.bucket,
            "s_adj": [x.s_adj, y.s_adj],
            "delta": _delta(x.s_adj, y.s_adj),
            "class": [x.failure_class, y.failure_class],
        }
        if abs(row["delta"]) > EPS or x.failure_class != y.failure_class:
            per_question.append(row)
        if x.valid_answer and not y.valid_answer:
            newly_failing.append(row)
        if y.valid_answer and not x.valid_answer:
            fixed.append(row)
        added = {
            k: y.flag_counts.get(k, 0) - x.flag_counts.get(k, 0)
            for k in sorted(y.flag_counts)
            if y.flag_counts.get(k, 0) > x.flag_counts.get(k, 0)
        }
        if added:
            new_violations.append({"question_id": qid, "track": y.track, "added": added})
    tracks = {}
    for track in sorted(set(base_report.tracks) | set(new_report.tracks)):
        gb, gn = base_report.tracks.get(track), new_report.tracks.get(track)
        tracks[track] = {
            key: [getattr(g, key) if g else None for g in (gb, gn)]
            + [_delta(getattr(gb, key) if gb else None, getattr(gn, key) if gn else None)]
            for key in ("run_s_adj", "accuracy", "valid_answer_rate", "run_violation_rate")
        }
        tracks[track]["mean_s_adj"] = [
            gb.means["s_adj"] if gb else None,
            gn.means["s_adj"] if gn else None,
            _delta(gb.means["s_adj"] if gb else None, gn.means["s_adj"] if gn else None),
        ]
    o = {
        key: [
            getattr(base_report.overall, key),
            getattr(new_report.overall, key),
            _delta(getattr(base_report.overall, key), getattr(new_report.overall, key)),
        ]
        for key in ("run_s_adj", "accuracy", "valid_answer_rate", "run_violation_rate")
    }
    per_question.sort(key=lambda r: (r["delta"], r["question_id"]))
    return {
        "overall": o,
        "tracks": tracks,
        "changed": per_question,
        "newly_failing": newly_failing,
        "fixed": fixed,
        "new_violations": new_violations,
        "only_in_base": sorted(set(b) - set(n)),
        "only_in_new": sorted(set(n) - set(b)),
    }


def format_compare(diff: dict[str, Any], limit: int = 30) -> str:
    """Plain-text rendering for the terminal."""

    def f(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    lines = ["metric                base     new    delta"]
    for key, (x, y, d) in diff["overall"].items():
        lines.append(f"{key:<20} {f(x):>6}  {f(y):>6}  {'' if d is None else f'{d:+.3f}':>7}")
    lines.append("")
    lines.append("track            run S_adj base → new (delta)   v base → new")
    for track, row in diff["tracks"].items():
        x, y, d = row["run_s_adj"]
        vx, vy, _ = row["run_violation_rate"]
        lines.append(f"{track:<16} {f(x)} → {f(y)} ({'' if d is None else f'{d:+.3f}'})   {f(vx)} → {f(vy)}")
    for title, key in (("newly failing", "newly_failing"), ("fixed", "fixed")):
        rows = diff[key]
        lines += ["", f"{title}: {len(rows)}"]
        for r in rows[:limit]:
            lines.append(
                f"  {r['question_id']}  {r['track']}/{r['bucket']}  S_adj {r['s_adj'][0]:.3f} → "
                f"{r['s_adj'][1]:.3f}  ({r['class'][0]} → {r['class'][1]})"
            )
    rows = diff["new_violations"]
    lines += ["", f"new violations: {len(rows)}"]
    for r in rows[:limit]:
        lines.append(f"  {r['question_id']}  {r['track']}  " + ", ".join(f"+{v} {k}" for k, v in r["added"].items()))
    if diff["only_in_base"] or diff["only_in_new"]:
        lines += ["", f"questions only in base: {len(diff['only_in_base'])}, only in new: {len(diff['only_in_new'])}"]
    return "\n".join(lines)
