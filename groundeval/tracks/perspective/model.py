"""Perspective's data: its truth (what the visibility cone says about one actor, one event,
one moment) and the answer an agent submits. Read by the candidates, the scorer, the
question format and ``contracts/``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...models import StrictModel
from ...questions.answers import AnswerBase

__all__ = ["NAME", "PerspectiveAnswer", "PerspectiveTruth"]

NAME = "perspective"


class PerspectiveTruth(StrictModel):
    track: Literal["perspective"] = NAME
    could_actor_have_known: bool
    target_event_id: str
    target_event_type: str
    target_artifacts: list[str] = Field(description="Artifacts of the target event (sorted).")
    evidence_artifacts: list[str] = Field(description="Target artifacts visible to the actor at as-of.")
    blocked_subsystems: list[str] = Field(description="Subsystems of target artifacts the actor's role cannot read.")
    role_at_as_of: list[str] = Field(default_factory=list)


class PerspectiveAnswer(AnswerBase):
    could_actor_have_known: bool
    evidence_artifacts: list[str] = Field(default_factory=list)
    blocked_subsystems: list[str] = Field(default_factory=list)
