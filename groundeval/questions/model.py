"""The question file format: what the generator writes and the runtime and scorer read.

A question carries its ground truth; :meth:`Question.public` is the only view an
agent ever gets (text, actor, as-of, answer schema) — never the truth, the expected
search space or other questions.
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, SerializationInfo, field_serializer, field_validator

from ..contract.models import Gate
from ..models import StrictModel as _Model
from ..tracks import builtin_tracks, is_registered
from ..tracks import get as get_track

Difficulty = Literal["easy", "medium", "hard"]

# The built-in tracks' names and truth models (a discriminated union on ``track``): the
# checked-in ``contracts/questions.schema.json`` describes these. A track registered later
# (``groundeval.tracks.register``) is accepted by the validators below and written through
# its own truth model.
_BUILTIN = builtin_tracks()
_BUILTIN_NAMES = frozenset(t.name for t in _BUILTIN)
_BUILTIN_TRUTHS = tuple(t.truth_model for t in _BUILTIN)
TrackName = Literal[tuple(t.name for t in _BUILTIN)]  # type: ignore[valid-type]
GroundTruth = Annotated[Union[_BUILTIN_TRUTHS], Field(discriminator="track")]  # type: ignore[valid-type]


def __getattr__(name: str) -> Any:
    # The truth models live with their tracks (groundeval/tracks/<name>/); this keeps the older
    # ``from groundeval.questions.model import <Track>Truth`` working for what a built-in
    # track's package exports.
    for track in _BUILTIN:
        module = sys.modules[type(track).__module__.rpartition(".")[0]]
        if name in getattr(module, "__all__", ()):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _plugin_truth(value: Any) -> type[BaseModel] | None:
    """The truth model of a registered, not built-in track that ``value`` belongs to."""
    name = value.get("track") if isinstance(value, dict) else getattr(value, "track", None)
    if name in _BUILTIN_NAMES or not is_registered(name):
        return None
    return get_track(name).truth_model


class Question(_Model):
    id: str = Field(description="Content hash of the question (stable across runs).")
    track: TrackName
    bucket: str
    difficulty: Difficulty
    text: str
    actor: str | None = Field(None, description="Whose view the gates enforce (None: no actor gate).")
    as_of: datetime = Field(description="The question's moment: the horizon gate's time.")
    gates: list[Gate] = Field(default_factory=list, description="Gates enforced during the episode.")
    answer_schema: dict[str, Any]
    ground_truth: GroundTruth
    template_id: str = ""
    context_subsystems: list[str] = Field(
        default_factory=list, description="Subsystems a context-mode window draws from."
    )
    meta: dict[str, Any] = Field(default_factory=dict, description="Spec, event types: for audits, never shown.")

    @field_validator("track", mode="wrap")
    @classmethod
    def _registered_track(cls, value: Any, handler: Any) -> Any:
        if isinstance(value, str) and value not in _BUILTIN_NAMES and is_registered(value):
            return value
        return handler(value)

    @field_validator("ground_truth", mode="wrap")
    @classmethod
    def _registered_truth(cls, value: Any, handler: Any) -> Any:
        model = _plugin_truth(value)
        if model is None:
            return handler(value)
        return value if isinstance(value, model) else model.model_validate(value)

    @field_serializer("ground_truth", mode="wrap")
    def _write_truth(self, value: Any, handler: Any, info: SerializationInfo) -> Any:
        if isinstance(value, _BUILTIN_TRUTHS):
            return handler(value)
        return value.model_dump(mode=info.mode)

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
