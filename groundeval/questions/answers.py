"""Answer formats per track: pydantic models (for ``contracts/``) and the exact JSON
Schema stored on each question (the Counterfactual one enumerates the pack's
mechanism vocabulary so mechanism matching is exact)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .model import NO_MECHANISM

DIRECTIONS = ["cause_to_effect", "effect_to_cause", "no_causal_link"]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rationale: str | None = Field(None, description="Optional free text; never scored.")


class PerspectiveAnswer(_Answer):
    could_actor_have_known: bool
    evidence_artifacts: list[str] = Field(default_factory=list)
    blocked_subsystems: list[str] = Field(default_factory=list)


class CounterfactualAnswer(_Answer):
    outcome_changed: bool
    causal_mechanism: str = Field(description="One of the pack's causal link spec names, or 'none'.")
    cause_event_id: str
    effect_event_id: str
    mechanism_direction: Literal["cause_to_effect", "effect_to_cause", "no_causal_link"]
    actors: list[str] = Field(default_factory=list)
    evidence_artifacts: list[str] = Field(default_factory=list)


class SilenceAnswer(_Answer):
    exists: bool
    evidence_artifacts: list[str] = Field(default_factory=list)


_STR_LIST = {"type": "array", "items": {"type": "string"}}
_RATIONALE = {"type": "string", "description": "Optional free text; never scored."}


def answer_schema(track: str, mechanisms: list[str] | None = None) -> dict[str, Any]:
    """The JSON Schema an answer to a question of ``track`` must satisfy."""
    if track == "perspective":
        props = {"could_actor_have_known": {"type": "boolean"}, "evidence_artifacts": _STR_LIST,
                 "blocked_subsystems": _STR_LIST}
        required = ["could_actor_have_known"]
    elif track == "counterfactual":
        vocab = sorted(set(mechanisms or [])) + [NO_MECHANISM]
        props = {"outcome_changed": {"type": "boolean"},
                 "causal_mechanism": {"type": "string", "enum": vocab},
                 "cause_event_id": {"type": "string"}, "effect_event_id": {"type": "string"},
                 "mechanism_direction": {"type": "string", "enum": list(DIRECTIONS)},
                 "actors": _STR_LIST, "evidence_artifacts": _STR_LIST}
        required = ["outcome_changed", "causal_mechanism", "cause_event_id", "effect_event_id",
                    "mechanism_direction"]
    elif track == "silence":
        props = {"exists": {"type": "boolean"}, "evidence_artifacts": _STR_LIST}
        required = ["exists"]
    else:
        raise ValueError(f"unknown track {track!r}")
    return {"type": "object", "properties": {**props, "rationale": _RATIONALE}, "required": required,
            "additionalProperties": False}
