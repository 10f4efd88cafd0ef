"""Counterfactual's data: its truth (a causal link spec's verdict on a cause/effect pair, or
a distractor's) and the answer an agent submits. Read by the candidates, the scorer, the
question format and ``contracts/``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...models import StrictModel
from ...questions.answers import AnswerBase

__all__ = ["DIRECTIONS", "NAME", "NO_MECHANISM", "CounterfactualAnswer", "CounterfactualTruth", "Direction"]

NAME = "counterfactual"
NO_MECHANISM = "none"
Direction = Literal["cause_to_effect", "effect_to_cause", "no_causal_link"]
DIRECTIONS = ["cause_to_effect", "effect_to_cause", "no_causal_link"]


class CounterfactualTruth(StrictModel):
    track: Literal["counterfactual"] = NAME
    outcome_changed: bool
    causal_mechanism: str = Field(description=f"Spec name, or '{NO_MECHANISM}' for a negative.")
    mechanism_aliases: list[str] = Field(default_factory=list)
    mechanism_direction: Direction
    cause_event_id: str
    effect_event_id: str
    cause_event_type: str
    effect_event_type: str
    actors: list[str] = Field(default_factory=list, description="Actors of cause and effect (sorted).")
    evidence_artifacts: list[str] = Field(default_factory=list, description="Cause's and effect's artifacts.")
    cause_artifacts: list[str] = Field(default_factory=list)
    effect_artifacts: list[str] = Field(default_factory=list)
    multi_cause: bool = False


class CounterfactualAnswer(AnswerBase):
    outcome_changed: bool
    causal_mechanism: str = Field(description="One of the pack's causal link spec names, or 'none'.")
    cause_event_id: str
    effect_event_id: str
    mechanism_direction: Literal["cause_to_effect", "effect_to_cause", "no_causal_link"]
    actors: list[str] = Field(default_factory=list)
    evidence_artifacts: list[str] = Field(default_factory=list)
