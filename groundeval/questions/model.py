"""The question file format: what the generator writes and the runtime and scorer read.

A question carries its ground truth; :meth:`Question.public` is the only view an
agent ever gets (text, actor, as-of, answer schema) — never the truth, the expected
search space or other questions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from ..contract.models import Gate

Difficulty = Literal["easy", "medium", "hard"]
PerspectiveBucket = Literal["positive", "negative_permission", "negative_temporal"]
CounterfactualBucket = Literal["positive", "negative"]
SilenceBucket = Literal["absence", "presence"]
Direction = Literal["cause_to_effect", "effect_to_cause", "no_causal_link"]
NO_MECHANISM = "none"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PerspectiveTruth(_Model):
    track: Literal["perspective"] = "perspective"
    could_actor_have_known: bool
    target_event_id: str
    target_event_type: str
    target_artifacts: list[str] = Field(description="Artifacts of the target event (sorted).")
    evidence_artifacts: list[str] = Field(description="Target artifacts visible to the actor at as-of.")
    blocked_subsystems: list[str] = Field(description="Subsystems of target artifacts the actor's role cannot read.")
    role_at_as_of: list[str] = Field(default_factory=list)


class CounterfactualTruth(_Model):
    track: Literal["counterfactual"] = "counterfactual"
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


class SilenceTruth(_Model):
    track: Literal["silence"] = "silence"
    exists: bool
    spec: str
    trigger_event_id: str
    trigger_event_type: str
    response_event_type: str
    response_event_id: str | None = None
    expected_search_space: list[str] = Field(description="Artifact ids an honest 'no' must have fetched.")
    expected_subsystems: list[str] = Field(default_factory=list)
    evidence_artifacts: list[str] = Field(default_factory=list, description="The response's artifacts, if any.")


GroundTruth = Annotated[Union[PerspectiveTruth, CounterfactualTruth, SilenceTruth], Field(discriminator="track")]


class Question(_Model):
    id: str = Field(description="Content hash of the question (stable across runs).")
    track: Literal["perspective", "counterfactual", "silence"]
    bucket: str
    difficulty: Difficulty
    text: str
    actor: str | None = Field(None, description="Whose view the gates enforce (None: no actor gate).")
    as_of: datetime = Field(description="The question's moment: the horizon gate's time.")
    gates: list[Gate] = Field(default_factory=list, description="Gates enforced during the episode.")
    answer_schema: dict[str, Any]
    ground_truth: GroundTruth
    template_id: str = ""
    context_subsystems: list[str] = Field(default_factory=list,
                                          description="Subsystems a context-mode window draws from.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Spec, event types: for audits, never shown.")

    def public(self) -> dict[str, Any]:
        """What an agent may see."""
        return {
            "question_id": self.id,
            "track": self.track,
            "text": self.text,
            "actor": self.actor,
            "as_of": self.as_of.isoformat().replace("+00:00", "Z"),
            "answer_schema": self.answer_schema,
        }


class QuestionSetMeta(_Model):
    contract_digest: str
    pack: str
    seed: int
    generator_version: str = "1"
    counts: dict[str, Any] = Field(default_factory=dict, description="Per track / bucket / difficulty.")
    balance: dict[str, Any] = Field(default_factory=dict, description="Achieved vs requested ratios.")
    skipped: dict[str, Any] = Field(default_factory=dict, description="Ambiguous records excluded, by reason.")
    shortcut_audit: dict[str, Any] = Field(default_factory=dict)


class QuestionSet(_Model):
    """The ``questions.json`` file."""

    metadata: QuestionSetMeta
    questions: list[Question]
