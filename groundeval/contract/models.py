"""Pydantic models of the evaluation contract.

These models are the single source of the file formats: the JSON Schemas in
``contracts/`` are generated from them (``groundeval schema``). Our own format
forbids unknown keys so typos surface; events and artifacts keep extra keys
because users' logs carry domain fields.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    field_validator,
    model_serializer,
    model_validator,
)

from ..models import StrictModel

Gate = Literal["horizon", "subsystem", "actor"]


class _Strict(StrictModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _omit_at(defaults: dict[str, Any]):
    """A wrap serializer leaving out the fields whose value is their default here: fields added
    later, so the dumps (and contract digests) of manifests that do not use them keep their bytes."""

    @model_serializer(mode="wrap")
    def _omit(self, handler):
        data = handler(self)
        if isinstance(data, dict):
            for key, default in defaults.items():
                if key in data and data[key] == default and type(data[key]) is type(default):
                    del data[key]
        return data

    return _omit


def _shorthand_schema(*short_forms: dict[str, Any]):
    """JSON Schema hook: the full object form, or any of the accepted shorthands.

    Files are checked against the generated schemas, so shorthands the validators
    accept must be in the schema too.
    """

    def hook(schema: dict[str, Any], *_: Any) -> None:
        full = dict(schema)
        title, description = full.get("title"), full.get("description")
        schema.clear()
        schema["anyOf"] = [*short_forms, full]
        if title:
            schema["title"] = title
        if description:
            schema["description"] = description

    return hook


def _list_or_one(schema: dict[str, Any]) -> None:
    """Field schema hook: a list of items, or a single item."""
    full = dict(schema)
    schema.clear()
    schema["anyOf"] = [full, full["items"]]
    for key in ("title", "description"):
        if key in full:
            schema[key] = full[key]


# --------------------------------------------------------------------------- access


class RoleAssignment(_Strict):
    """An actor holds ``role`` from ``since`` (inclusive) until ``until`` (exclusive)."""

    role: str
    since: datetime | None = None
    until: datetime | None = None


_TIME = {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}
_ROLE_WINDOW = {
    "type": "object",
    "required": ["role"],
    "additionalProperties": False,
    "properties": {"role": {"type": "string"}, "since": _TIME, "until": _TIME},
}


class ActorSpec(_Strict):
    """An actor's role history; several windows model hires, departures and role changes."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=_shorthand_schema(
            {"type": "string", "description": "The role name (one open-ended window)."},
            {"type": "array", "items": _ROLE_WINDOW, "minItems": 1},
            {
                "type": "object",
                "required": ["role"],
                "additionalProperties": False,
                "properties": {
                    "role": {"type": "string"},
                    "since": _TIME,
                    "until": _TIME,
                    "display_name": {"type": ["string", "null"]},
                    "system": {"type": "boolean"},
                },
            },
        ),
    )

    roles: list[RoleAssignment]
    display_name: str | None = None
    system: bool = Field(False, description="Bots and integrations: never a Perspective actor.")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        # "alice: engineer" and "alice: [{role: ..., until: ...}]" are accepted shorthands.
        if isinstance(value, str):
            return {"roles": [{"role": value}]}
        if isinstance(value, list):
            return {"roles": value}
        if isinstance(value, dict) and "role" in value and "roles" not in value:
            value = dict(value)
            extra = {k: value.pop(k) for k in ("display_name", "system") if k in value}
            return {"roles": [value], **extra}
        return value


class SubsystemGrant(_Strict):
    """A role reads ``name`` from ``since`` (inclusive) until ``until`` (exclusive)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=_shorthand_schema(
            {"type": "string", "description": "The subsystem name (granted at all times)."}
        ),
    )

    name: str
    since: datetime | None = None
    until: datetime | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value


class RoleSpec(_Strict):
    subsystems: list[SubsystemGrant] = Field(default_factory=list)
    broadcast_event_types: list[str] = Field(
        default_factory=list,
        description="Event types this role is told about: their artifacts become visible "
        "even outside the role's subsystems.",
    )
    external: bool = Field(False, description="Declared outside the organisation (no access expected).")
    description: str | None = None


class Visibility(_Strict):
    """Restricts an artifact to the listed actors and/or roles."""

    actors: list[str] = Field(default_factory=list)
    roles: list[str] = Field(default_factory=list)


class AccessPolicy(_Strict):
    actors: dict[str, ActorSpec] = Field(default_factory=dict)
    roles: dict[str, RoleSpec] = Field(default_factory=dict)
    restrictions: dict[str, Visibility] = Field(
        default_factory=dict, description="Per-artifact visibility restrictions, by artifact id."
    )


# --------------------------------------------------------------------------- evaluation


class CausalJoin(_Strict):
    """Cause and effect must agree on these dotted paths."""

    cause: str
    effect: str


class SilenceJoin(_Strict):
    """Trigger and response must agree on these dotted paths."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=_shorthand_schema(
            {
                "type": "object",
                "required": ["cause", "effect"],
                "additionalProperties": False,
                "properties": {"cause": {"type": "string"}, "effect": {"type": "string"}},
            }
        ),
    )

    trigger: str
    response: str

    @model_validator(mode="before")
    @classmethod
    def _accept_cause_effect(cls, value: Any) -> Any:
        if isinstance(value, dict) and "cause" in value and "trigger" not in value:
            value = dict(value)
            value["trigger"] = value.pop("cause")
            value["response"] = value.pop("effect", None)
        return value


def _as_list(value: Any) -> Any:
    if value is None:
        return []
    return [value] if isinstance(value, dict) else value


class CausalLinkSpec(_Strict):
    name: str
    cause_event_type: str
    effect_event_type: str
    max_gap_days: float = Field(7.0, gt=0)
    join: list[CausalJoin] = Field(default_factory=list, json_schema_extra=_list_or_one)
    match_field: str | None = Field(None, description="Dotted path on the cause event to filter on.")
    match_value: Any = None
    premise_template: str | None = None
    outcome_template: str | None = None
    templates_as_happened: bool = Field(
        False,
        description="The templates describe the cause and the effect as they happened (an original config.yaml's "
        "do): the outcome template is then never shown as an example of a different outcome.",
    )
    _omit_defaults = _omit_at({"templates_as_happened": False})
    outcome_changed: bool = True
    mechanism_aliases: list[str] = Field(default_factory=list)
    description: str | None = None

    _join_list = field_validator("join", mode="before")(_as_list)


class SearchSelector(_Strict):
    """Where a response would live: an exact artifact id or a ranked query, per subsystem.

    Templates use ``{dotted.path}`` placeholders resolved on the trigger event.
    """

    subsystem: str
    id_template: str | None = None
    query_template: str | None = None
    limit: int = Field(3, ge=1, le=20)
    match: Literal["bm25", "phrase"] = Field(
        "bm25",
        description="How a query_template selects: 'bm25' ranks the subsystem's artifacts (any query word; top "
        "limit), 'phrase' keeps those whose id, title or text holds the rendered query, case-insensitive (first "
        "limit by id; what an original config.yaml's selectors mean).",
    )
    _omit_defaults = _omit_at({"match": "bm25"})

    @model_validator(mode="after")
    def _one_template(self) -> "SearchSelector":
        if (self.id_template is None) == (self.query_template is None):
            raise ValueError("exactly one of id_template or query_template is required")
        return self


class SilencePairSpec(_Strict):
    name: str | None = None
    trigger_event_type: str
    response_event_type: str
    max_gap_days: float = Field(7.0, gt=0)
    join: list[SilenceJoin] = Field(default_factory=list, json_schema_extra=_list_or_one)
    match_field: str | None = None
    match_value: Any = None
    search_space_subsystems: list[str] = Field(default_factory=list)
    search_space: list[str] = Field(
        default_factory=list, description="Artifact id templates (shorthand for id_template selectors)."
    )
    search_space_selectors: list[SearchSelector] = Field(default_factory=list)
    description: str | None = None

    _join_list = field_validator("join", mode="before")(_as_list)

    @property
    def key(self) -> str:
        return self.name or f"{self.trigger_event_type}->{self.response_event_type}"


class PerspectiveConfig(_Strict):
    positive: float = Field(0.5, ge=0)
    negative_permission: float = Field(0.25, ge=0)
    negative_temporal: float = Field(0.25, ge=0)
    require_cross_subsystem_cases: bool = False
    pivots_per_actor: int = Field(3, ge=1)


class TrackWeights(_Strict):
    answer: float = Field(ge=0, le=1)
    trajectory: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _sum_to_one(self) -> "TrackWeights":
        if abs(self.answer + self.trajectory - 1.0) > 1e-9:
            raise ValueError("answer + trajectory must equal 1")
        return self


def _default_weights() -> dict[str, TrackWeights]:
    """Each registered track's own default (answer, trajectory) weights."""
    from ..tracks import tracks

    return {t.name: TrackWeights(answer=t.default_weights[0], trajectory=t.default_weights[1]) for t in tracks()}


class ScoringConfig(_Strict):
    weights: dict[str, TrackWeights] = Field(default_factory=_default_weights)
    counterfactual_threshold: float = Field(0.80, ge=0, le=1)
    tiers: dict[str, float] = Field(
        default_factory=lambda: {"high": 0.05, "moderate": 0.15},
        description="Compliance tiers: v = 0 perfect, v < high, v < moderate, else low.",
    )


def _default_gates() -> dict[str, list[Gate]]:
    """Each registered track's own default gates."""
    from ..tracks import tracks

    return {t.name: list(t.default_gates) for t in tracks()}


class EvaluationConfig(_Strict):
    causal_links: list[CausalLinkSpec] = Field(default_factory=list)
    silence_pairs: list[SilencePairSpec] = Field(default_factory=list)
    perspective: PerspectiveConfig = Field(default_factory=PerspectiveConfig)
    perspective_actors: list[str] = Field(default_factory=list)
    easy_ratio: float = Field(0.34, ge=0)
    medium_ratio: float = Field(0.33, ge=0)
    hard_ratio: float = Field(0.33, ge=0)
    max_perspective_questions: int = Field(60, ge=0)
    max_counterfactual_questions: int = Field(40, ge=0)
    max_silence_questions: int = Field(40, ge=0)
    max_per_actor: int = Field(5, ge=1, description="Cap of questions per actor and track.")
    max_per_event_type: int = Field(5, ge=1, description="Cap of questions per event type and track.")
    counterfactual_negative_ratio: float = Field(
        0.5, ge=0, le=1, description="Share of no_causal_link questions; 0.5 keeps always-yes/always-no at chance."
    )
    shortcut_limit: float = Field(
        0.60,
        ge=0,
        le=1,
        description="Highest accuracy any answer-blind strategy of the shortcut audit may reach on "
        "a track (raised to the requested label split); above it the verifier reports an error.",
    )
    shortcut_min_questions: int = Field(
        30, ge=1, description="Tracks with fewer questions are not judged against shortcut_limit (too noisy)."
    )
    gates: dict[str, list[Gate]] = Field(default_factory=_default_gates)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    seed: int = 42


class Sources(_Strict):
    events: str = Field("events.jsonl", description="JSONL, Parquet or CSV, relative to the manifest.")
    artifacts: str = Field("artifacts", description="A folder of <subsystem>/<id>.json files or one JSONL file.")


class AdapterSettings(_Strict):
    """Settings that belong to optional LLM adapters; the core ignores them."""

    provider: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    base_url: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_retries: int | None = Field(None, ge=0)
    llm_question_prose: bool = False
    llm_model: str | None = Field(None, description="Model writing question prose, when llm_question_prose is on.")


class Manifest(_Strict):
    """A pack manifest (``groundeval.yaml``)."""

    name: str
    description: str | None = None
    timezone: str = "UTC"
    sources: Sources = Field(default_factory=Sources)
    access: AccessPolicy = Field(default_factory=AccessPolicy)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    adapters: AdapterSettings = Field(default_factory=AdapterSettings)


# --------------------------------------------------------------------------- records


class Event(BaseModel):
    """One timestamped record of the event log. Extra keys are kept."""

    model_config = ConfigDict(extra="allow")

    id: StrictStr | StrictInt = Field(description="A string, or an integer read as its decimal text (1000 -> '1000').")
    type: str
    timestamp: datetime
    actors: list[str] = Field(default_factory=list)
    artifact_ids: dict[str, StrictStr | StrictInt | list[StrictStr | StrictInt] | None] = Field(
        default_factory=dict,
        description="key -> artifact id or list of ids (integers read as their decimal text); null values are ignored.",
    )
    facts: dict[str, Any] = Field(default_factory=dict)


class Artifact(BaseModel):
    """A document an agent may search and fetch. Extra keys (text fields) are kept.

    ``id`` defaults to the file stem and ``subsystem`` to the parent folder; the
    creation time is ``timestamp``, ``created_at`` or ``date``.
    """

    model_config = ConfigDict(extra="allow")

    id: StrictStr | StrictInt | None = Field(
        default=None, description="A string, or an integer read as its decimal text; else the file stem."
    )
    subsystem: str | None = None
    timestamp: datetime | None = None
    created_at: datetime | None = None
    date: datetime | None = None
    title: str | None = None
    actors: list[str] = Field(default_factory=list)
    visibility: Visibility | None = None
