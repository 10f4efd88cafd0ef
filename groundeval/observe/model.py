"""The observed run: what an agent did with its own tools, whatever recorded it.

An observed run is the framework-neutral record a task contract is scored against: tool
calls in the order they happened (with the agent that made each, its arguments and result),
the messages, the final answer and, when the harness can tell, the records the run left
behind (``end_state``). Problems met while importing (a malformed span, arguments that are
not JSON) are kept in ``problems`` with their location, so a bad recording is visible in
the score instead of crashing the import.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..models import StrictModel

__all__ = ["ImportProblem", "ObservedCall", "ObservedMessage", "ObservedRun"]


class ImportProblem(StrictModel):
    """Something in the recording that could not be read as it should (located)."""

    where: str = Field(description="File and span (or record) the problem is in.")
    message: str


class ObservedCall(StrictModel):
    index: int
    tool: str
    agent: str | None = Field(None, description="The agent (later: its role) that made the call.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    call_id: str | None = None
    span_id: str | None = None


class ObservedMessage(StrictModel):
    role: str
    content: str
    agent: str | None = None


class ObservedRun(StrictModel):
    schema_version: str = "1"
    kind: Literal["observed-run"] = "observed-run"
    run_id: str
    source: str = Field(description="What it was imported from: otel, trace or run.")
    agents: list[str] = Field(default_factory=list, description="Agents seen, in order of first appearance.")
    calls: list[ObservedCall] = Field(default_factory=list)
    messages: list[ObservedMessage] = Field(default_factory=list)
    final_answer: Any = None
    end_state: dict[str, Any] | None = Field(
        None, description="The records the run left (when the harness recorded them): compared by hash."
    )
    problems: list[ImportProblem] = Field(default_factory=list)
