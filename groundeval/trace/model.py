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

import annotated_types
import msgspec
from pydantic import BaseModel, Field, model_serializer

from ..contract.models import Gate
from ..models import StrictModel

Mode = Literal["tool", "context", "zero-shot"]
CallStatus = Literal["ok", "not_found", "denied", "invalid", "error"]
TOOL_NAMES = ("search_artifacts", "fetch_artifact", "submit_answer")
# Trace statuses of an episode the agent did not finish by itself (it raised, or ran out of
# time): such an episode scores 0 (groundeval.scoring.score.void_reason) and fails the gate.
ERRORED_STATUSES = ("error", "timeout")


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
        "Part of the trace's identity with the question (one trace per question and trial in a run, "
        "whatever its agent or mode); written "
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


# --------------------------------------------------------------------------- the trace as msgspec structs

# The datetimes a struct holds as text until :func:`decode_trace` checks and converts them:
# msgspec's own datetime accepts texts pydantic refuses or reads otherwise (it rounds a 7th
# fractional digit, pydantic truncates it). This is a subset both read alike: offsets up to
# 23:59 as pydantic's (``fromisoformat`` reads +00:60 as an hour, pydantic refuses it);
# ``fromisoformat`` refuses the impossible dates and times pydantic refuses.
_DATETIME = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?\Z"
    ),
]
# a trace nested deeper than this is refused by pydantic; msgspec reads deeper
_MAX_DEPTH = 200
_NOT_OPENING = bytes(b for b in range(256) if b not in b"[{")


def _struct_annotation(annotation: Any) -> Any:
    """``annotation`` with every model replaced by its :func:`_struct` and datetimes by text."""
    if annotation is datetime:
        return _DATETIME
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _struct(annotation)
    args = get_args(annotation)
    origin = get_origin(annotation)
    if not args or origin is Literal:
        return annotation
    plain = tuple(_struct_annotation(a) for a in args)
    if plain == args:
        return annotation
    if origin in (Union, UnionType):
        return reduce(operator.or_, plain)
    return origin[plain]


def _struct_default(f: Any) -> Any:
    if f.default_factory is None:
        return f.default
    factory = f.default_factory
    if isinstance(factory, type) and issubclass(factory, BaseModel):
        factory = _struct(factory)
    return msgspec.field(default_factory=factory)


@cache
def _struct(model: type[BaseModel]) -> type[msgspec.Struct]:
    """A msgspec struct of ``model``'s fields (their types, defaults and ``ge`` bounds;
    unknown fields refused, as the model forbids them). Strict: a value the model would
    coerce (``"1"`` for an int, ``1`` for a bool) is refused, and left to the model."""
    fields = []
    for name, f in model.model_fields.items():
        ann = _struct_annotation(f.annotation)
        for m in f.metadata:
            if not isinstance(m, annotated_types.Ge):
                raise TypeError(f"{model.__name__}.{name}: no struct for the constraint {m!r}")
            ann = Annotated[ann, msgspec.Meta(ge=m.ge)]
        fields.append((name, ann) if f.is_required() else (name, ann, _struct_default(f)))
    return msgspec.defstruct(f"{model.__name__}Struct", fields, kw_only=True, forbid_unknown_fields=True)


_decode = msgspec.json.Decoder(_struct(Trace), strict=True).decode
TimingsStruct = _struct(Timings)  # a trace's timings as re-scoring keeps them


def decode_trace(line: bytes) -> Any | None:
    """A trace line as a struct that reads like a :class:`Trace` (the same fields and values;
    nested models as structs) — or None where msgspec does not vouch for the model's reading
    (a line it refuses, nested near pydantic's limit, a datetime outside the subset both read
    alike): the caller then asks the model, which accepts it or raises the located error.
    Four to five times faster than the model; re-scoring reads traces this way."""
    if len(line.translate(None, _NOT_OPENING)) > _MAX_DEPTH:  # the [ and { it holds, nested or not
        return None
    try:
        t = _decode(line)
        as_of = _AS_OF.get(t.as_of)  # a run's traces share their questions' few as-of times
        if as_of is None:
            as_of = _datetime(t.as_of)
            if len(_AS_OF) < 4096:
                _AS_OF[t.as_of] = as_of
        t.as_of = as_of
        timings = t.timings
        if timings.started is not None:
            timings.started = _datetime(timings.started)
        if timings.ended is not None:
            timings.ended = _datetime(timings.ended)
    except (msgspec.DecodeError, ValueError):  # msgspec.ValidationError is a DecodeError
        return None
    return t


_AS_OF: dict[str, datetime] = {}  # as-of text -> its datetime (immutable: shared)


def _datetime(text: str) -> datetime:
    """A datetime text of the subset (``_DATETIME``) as pydantic reads it (an impossible date
    raises ValueError, as pydantic refuses it)."""
    return datetime.fromisoformat(text)
