"""Counterfactual under the ``paper`` scoring profile: the original GroundEval
release's answer and trajectory terms (docs/scoring.md, "Scoring profiles"). Pure.

Answer (0 when ``outcome_changed`` is missing): ``0.20`` outcome + ``0.20`` mechanism
(the true label or a declared alias, compared case-folded with '-' and ' ' read as '_')
+ ``0.20`` cause event id + ``0.20`` effect event id + ``0.10`` direction (exact) +
``0.05 *`` share of the true evidence named (0.05 when the truth has none) + ``0.05``
when at least one true actor is named (or the truth has none); correct at ``>= 0.80``.

Trajectory, retrieved = every id a search or fetch returned (search hits included) and,
in context mode, the cited ids: ``0.20`` a cause artifact retrieved + ``0.20`` an effect
artifact retrieved + ``0.35 *`` share of the evidence artifacts retrieved + ``0.15 *
(1 - horizon calls/n)`` (1 without calls) + ``0.10`` the true mechanism named.
"""

from __future__ import annotations

from typing import Any

from ...scoring.profiles import PaperPath, ProfileScore, paper_bool, paper_label, paper_set


def _mechanism_named(answer: dict[str, Any] | None, truth: Any) -> bool:
    if not answer:
        return False
    valid = {paper_label(truth.causal_mechanism), *(paper_label(a) for a in truth.mechanism_aliases if a)}
    valid.discard("")
    said = paper_label(answer.get("causal_mechanism", "")) or paper_label(answer.get("mechanism", ""))
    return bool(said) and said in valid


def score(question: Any, truth: Any, answer: dict[str, Any] | None, path: PaperPath, config: Any) -> ProfileScore:
    outcome = paper_bool(answer.get("outcome_changed")) if answer else None
    named = _mechanism_named(answer, truth)
    if outcome is None:
        comps = dict.fromkeys(
            ("outcome", "mechanism", "cause_event", "effect_event", "direction", "evidence_named", "actors"), 0.0
        )
        s_answer, correct = 0.0, False
    else:
        gt_ev = set(truth.evidence_artifacts)
        ans_ev = paper_set(answer.get("evidence_artifacts"))
        gt_actors = set(truth.actors)
        ans_actors = paper_set(answer.get("actors", answer.get("involved_actors", [])))
        comps = {
            "outcome": float(outcome == truth.outcome_changed),
            "mechanism": float(named),
            "cause_event": float(
                bool(truth.cause_event_id) and str(answer.get("cause_event_id", "")) == truth.cause_event_id
            ),
            "effect_event": float(
                bool(truth.effect_event_id) and str(answer.get("effect_event_id", "")) == truth.effect_event_id
            ),
            "direction": float(answer.get("mechanism_direction") == truth.mechanism_direction),
            "evidence_named": len(gt_ev & ans_ev) / len(gt_ev) if gt_ev else 1.0,
            "actors": float(bool(gt_actors & ans_actors)) if gt_actors else 1.0,
        }
        weights = {
            "outcome": 0.2,
            "mechanism": 0.2,
            "cause_event": 0.2,
            "effect_event": 0.2,
            "direction": 0.1,
            "evidence_named": 0.05,
            "actors": 0.05,
        }
        s_answer = min(sum(weights[k] * comps[k] for k in weights), 1.0)
        correct = s_answer >= 0.80
    cause, effect = set(truth.cause_artifacts), set(truth.effect_artifacts)
    if not cause and not effect:
        cause = effect = set(truth.evidence_artifacts)
    evidence = set(truth.evidence_artifacts)
    got = path.retrieved
    traj = {
        "cause_found": float(bool(cause & got)),
        "effect_found": float(bool(effect & got)),
        "evidence_coverage": len(evidence & got) / len(evidence) if evidence else 1.0,
        "horizon_discipline": path.discipline("horizon"),
        "mechanism_named": float(named),
    }
    s_traj = (
        0.20 * traj["cause_found"]
        + 0.20 * traj["effect_found"]
        + 0.35 * traj["evidence_coverage"]
        + 0.15 * traj["horizon_discipline"]
        + 0.10 * traj["mechanism_named"]
    )
    return ProfileScore(comps, s_answer, correct, traj, s_traj)
