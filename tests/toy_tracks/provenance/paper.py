"""Provenance under the ``paper`` scoring profile: the answer's boolean, and a trajectory
of ``1 - (calls that broke the actor gate) / calls`` (1 without calls)."""

from __future__ import annotations

from typing import Any

from groundeval.scoring.profiles import PaperPath, ProfileScore, paper_bool


def score(question: Any, truth: Any, answer: dict[str, Any] | None, path: PaperPath, config: Any) -> ProfileScore:
    said = paper_bool(answer.get("recorded")) if answer else None
    correct = said is not None and said == truth.recorded
    traj = {"actor_gate_discipline": path.discipline("actor_gate")}
    return ProfileScore({"recorded": float(correct)}, float(correct), correct, traj, traj["actor_gate_discipline"])
