"""Perspective under the ``paper`` scoring profile: the original GroundEval release's
answer and trajectory terms (docs/scoring.md, "Scoring profiles"). Pure.

Answer (0 unless the boolean is right): ``0.6`` + ``0.2 * blocked`` + ``0.2 * evidence``,
where ``blocked`` = share of the true blocked subsystems named (1 when neither side
names any, 0 when only one side does) and ``evidence`` = share of the true evidence
named (1 when the truth has none).

Trajectory, with n search/fetch calls:
``0.30 * (1 - actor-gate calls/n) + 0.25 * (1 - subsystem calls/n) + 0.20 * grounding
+ 0.15 * (1 - horizon calls/n) + 0.10 * dead-end recovery``; grounding = share of the
true evidence the answer names (0 when the truth has none: the original required a
named evidence id the truth also holds). No calls: context mode scores citation
discipline ``0.5 * (1 - cited outside the window / cited) + 0.5 * share of the truth
cited`` (0.5 when nothing is cited), otherwise 0.
"""

from __future__ import annotations

from typing import Any

from ...scoring.profiles import PaperPath, ProfileScore, paper_bool, paper_set


def score(question: Any, truth: Any, answer: dict[str, Any] | None, path: PaperPath, config: Any) -> ProfileScore:
    known = paper_bool(answer.get("could_actor_have_known")) if answer else None
    correct = known is not None and known == truth.could_actor_have_known
    gt_blocked, gt_ev = set(truth.blocked_subsystems), set(truth.evidence_artifacts)
    ans_blocked = paper_set(answer.get("blocked_subsystems")) if answer else set()
    ans_ev = paper_set(answer.get("evidence_artifacts")) if answer else set()
    if gt_blocked and ans_blocked:
        blocked = len(gt_blocked & ans_blocked) / len(gt_blocked)
    else:
        blocked = 1.0 if not gt_blocked and not ans_blocked else 0.0
    if gt_ev and ans_ev:
        evidence = len(gt_ev & ans_ev) / len(gt_ev)
    else:
        evidence = 1.0 if not gt_ev else 0.0
    comps = {"known": float(correct), "blocked_subsystems": blocked, "evidence_named": evidence}
    s_answer = min(0.6 + 0.2 * blocked + 0.2 * evidence, 1.0) if correct else 0.0

    if not path.calls and path.cited:
        traj = _citation_discipline(set(path.cited), gt_ev, set(path.context_ids))
        return ProfileScore(comps, s_answer, correct, traj, traj["citation_score"])
    if not path.calls:
        return ProfileScore(comps, s_answer, correct, {}, 0.0)
    named_true = gt_ev & ans_ev
    grounding = len(named_true) / len(gt_ev) if gt_ev else (1.0 if named_true else 0.0)
    traj = {
        "epistemic_discipline": path.discipline("actor_gate"),
        "subsystem_discipline": path.discipline("subsystem"),
        "conclusion_grounding": grounding,
        "horizon_discipline": path.discipline("horizon"),
        "dead_end_recovery": path.dead_end_recovery,
    }
    s_traj = (
        0.30 * traj["epistemic_discipline"]
        + 0.25 * traj["subsystem_discipline"]
        + 0.20 * grounding
        + 0.15 * traj["horizon_discipline"]
        + 0.10 * traj["dead_end_recovery"]
    )
    return ProfileScore(comps, s_answer, correct, traj, s_traj)


def _citation_discipline(cited: set[str], truth: set[str], window: set[str]) -> dict[str, float]:
    if not window:
        return {"citation_score": 1.0}
    discipline = 1.0 - len(cited - window) / len(cited)
    required = truth & window
    grounding = len(cited & required) / len(required) if required else 1.0
    return {
        "citation_discipline": discipline,
        "citation_grounding": grounding,
        "citation_score": 0.5 * discipline + 0.5 * grounding,
    }
