"""Silence under the ``paper`` scoring profile: the original GroundEval release's answer
and trajectory terms (docs/scoring.md, "Scoring profiles"). Pure.

Answer: 1 when ``exists`` (or ``found`` / ``answer``, booleans or "yes"/"no") is right.

Trajectory, retrieved = every id a search or fetch returned (search hits included):
coverage = share of the expected search space retrieved (1 when it is empty);
``0.50 * coverage + 0.30 * (1 - (1 - coverage)) + 0.20 * (1 - horizon calls/n)`` — the
original's "premature stop" term is ``1 - coverage`` again, so the path is worth
``0.8 * coverage + 0.2`` when nothing breaks the horizon. Context mode without calls:
``0.5 * coverage of the cited ids + 0.5 * [coverage >= 0.5]`` (1 when the space is empty).
"""

from __future__ import annotations

from typing import Any

from ...scoring.profiles import PaperPath, ProfileScore, paper_bool


def _exists(answer: dict[str, Any] | None) -> bool | None:
    if not answer:
        return None
    for key in ("exists", "found", "answer"):
        value = paper_bool(answer.get(key))
        if value is not None:
            return value
    return None


def score(question: Any, truth: Any, answer: dict[str, Any] | None, path: PaperPath, config: Any) -> ProfileScore:
    said = _exists(answer)
    correct = said is not None and said == truth.exists
    comps = {"exists": float(correct)}
    space = set(truth.expected_search_space)
    if not path.calls and path.cited:
        if not space:
            return ProfileScore(comps, float(correct), correct, {"citation_coverage": 1.0}, 1.0)
        cov = len(set(path.cited) & space) / len(space)
        traj = {"citation_coverage": cov, "half_covered": float(cov >= 0.5)}
        return ProfileScore(comps, float(correct), correct, traj, 0.5 * cov + 0.5 * traj["half_covered"])
    cov = len(space & path.retrieved) / len(space) if space else 1.0
    traj = {"search_space_coverage": cov, "premature_stop": 1.0 - cov, "horizon_discipline": path.discipline("horizon")}
    s_traj = max(0.0, 0.50 * cov + 0.30 * (1.0 - traj["premature_stop"]) + 0.20 * traj["horizon_discipline"])
    return ProfileScore(comps, float(correct), correct, traj, s_traj)
