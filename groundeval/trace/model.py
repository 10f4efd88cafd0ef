"""The trace record: one per episode, one JSON line in ``traces.jsonl``.

Everything scoring needs is in the deterministic part; wall-clock figures live in
``timings``, which scoring ignores, so re-scoring the same trace gives the same bytes.
"""

from __future__ import annotations

import operator
from datetime import datetime
from functools import cache, reduce
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_serializer
from typing_extensions import NotRequired, Required, TypedDict

from ..contract.models import Gate
from ..models import StrictModel

Mode = Literal["tool", "context", "zero-shot"]
CallStatus = Literal["ok", "not_found", "denied", "invalid", "error"]
TOOL_NAMES = ("search_artifacts", "fetch_artifact", "submit_answer")


_Model = StrictModel  # the one shared base of groundeval's own formats


class ToolCall(_Model):
    """One call as the agent sent it. Strings holding a lone surrogate are recorded escaped
    (see :mod:`groundeval.trace.text`); the call is then ``invalid`` and its error names them."""

    index: int
    tool: str = Field(description="The name the agent used (unknown names are recorded as-is).")
    arguments: dict[str, Any] = Field(default_factory=dict)
    status: CallStatus
    result_ids: list[str] = Field(
        default_factory=list, description="Artifact ids returned (search hits or the fetched id)."
    )
    flags: list[Gate] = Field(default_factory=list, description="Governance gates this call broke.")
    error: str | None = None


class Submission(_Model):
    call_index: int
    answer: Any
    valid: bool
    errors: list[str] = Field(default_factory=list)
    citation_flags: dict[str, list[Gate] | None] = Field(
        default_factory=dict,
        description="Per cited evidence artifact, the gates it breaks for the question's actor and "
        "as-of ([] = valid; null = no such artifact). Filled by the runtime so scoring stays pure.",
    )


class Timings(_Model):
    started: datetime | None = None
    ended: datetime | None = None
    total_ms: float | None = None
    call_latency_ms: list[float] = Field(default_factory=list)


class Trace(_Model):
    schema_version: str = "1"
    question_id: str
    track: str
    mode: Mode
    actor: str | None
    as_of: datetime
    contract_digest: str
    agent: str | None = None
    trial: int = Field(
        0,
        ge=0,
        description="Which repeated trial of the question this is (run --trials K: 0..K-1). "
        "Part of the trace's identity with question, agent and mode; written "
        "only when > 0, so traces without it read as trial 0.",
    )
    calls: list[ToolCall] = Field(default_factory=list)
    context_ids: list[str] = Field(default_factory=list, description="Context-mode window C, in order shown.")
    submissions: list[Submission] = Field(default_factory=list)
    final_answer: dict[str, Any] | None = Field(None, description="The valid submission that ended the episode.")
    status: Literal["completed", "no_answer", "step_budget", "timeout", "error", "abandoned"] = Field(
        "no_answer",
        description="How the episode ended; 'abandoned' = the MCP server expired it after its idle "
        "timeout without an accepted answer.",
    )
    messages: list[dict[str, Any]] = Field(default_factory=list, description="Agent narration, diagnostics only.")
    usage: dict[str, int] = Field(default_factory=dict, description="Token usage, when an LLM adapter ran.")
    timings: Timings = Field(default_factory=Timings)

    @model_serializer(mode="wrap")
    def _omit_trial_zero(self, handler):
        data = handler(self)
        if isinstance(data, dict) and data.get("trial") == 0:
            del data["trial"]  # single-trial traces keep the bytes they always had
        return data


# --------------------------------------------------------------------------- the trace as plain data


def _plain(annotation: Any) -> Any:
    """``annotation`` with every model in it replaced by its :func:`_data_type`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _data_type(annotation)
    args = get_args(annotation)
    origin = get_origin(annotation)
    if not args or origin is Literal:
        return annotation
    plain = tuple(_plain(a) for a in args)
    if plain == args:
        return annotation
    if origin in (Union, UnionType):
        return reduce(operator.or_, plain)
    return origin[plain]


@cache
def _data_type(model: type[BaseModel]) -> Any:
    """A TypedDict of ``model``'s fields (their types and constraints, required as in the
    model, the model's config): validating JSON against it accepts exactly what the model
    accepts, into dicts, without building a model per object."""
    fields = {}
    for name, f in model.model_fields.items():
        ann = _plain(f.annotation)
        if f.metadata:
            ann = Annotated[(ann, *f.metadata)]
        fields[name] = Required[ann] if f.is_required() else NotRequired[ann]
    data = TypedDict(f"{model.__name__}Data", fields)  # type: ignore[operator]
    data.__pydantic_config__ = ConfigDict(**model.model_config)  # type: ignore[attr-defined]
    return data


@cache
def trace_data_adapter() -> TypeAdapter:
    """Validates a trace line into plain data (dicts and lists): the same lines as
    ``Trace.model_validate_json`` accepts, the same values, but a field left out stays out
    (its default is the model's) — ~40% faster than building the models. Re-scoring reads
    traces this way; any line it refuses is parsed by the model again for the located error."""
    return TypeAdapter(_data_type(Trace))
