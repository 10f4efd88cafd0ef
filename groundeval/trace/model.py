"""The trace record: one per episode, one JSON line in ``traces.jsonl``.

Everything scoring needs is in the deterministic part; wall-clock figures live in
``timings``, which scoring ignores, so re-scoring the same trace gives the same bytes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_serializer

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
