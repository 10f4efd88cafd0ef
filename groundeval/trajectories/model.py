"""One model for a trajectory, whatever file shape it came from.

A trajectory is what an agent did in one conversation: its messages in order and its tool
calls in order, each with the output the file recorded for it (when it recorded one). Every
reader in :mod:`groundeval.trajectories.shapes` turns its shape into this model; the verifier
(:mod:`groundeval.trajectories.verify`) replays the calls and never looks at the shape again.

Plain dataclasses with slots (not pydantic): a verification run builds one per record, 100,000s
of them, and nothing here is user-edited input that needs validation messages of its own — the
readers locate every problem themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["SHAPES", "Call", "Location", "Message", "ReadProblem", "Trajectory"]

SHAPES = ("tau2", "tau-bench", "openai", "anthropic", "world-trace")
"""The shapes read, as named in outputs: τ² simulation runs, τ-bench (v1) result entries, OpenAI
chat messages, Anthropic messages, groundeval world traces."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where a record starts: the file, its 1-based line, and its 0-based index among the file's
    records (for a τ² results file: among its simulations; in JSON Lines: its line's among the
    non-blank lines)."""

    file: str
    line: int | None = None
    index: int | None = None
    item: int | None = None
    """The position inside a JSON Lines line that holds several records (a list, τ² results)."""

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.index is not None:
            where += f" (record {self.index}" + (f", item {self.item})" if self.item is not None else ")")
        return where

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "line": self.line, "index": self.index}
        if self.item is not None:
            out["item"] = self.item
        return out


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """A record (or the rest of a file) that could not be read: where, which field, and why.

    Reading goes on after one: the next line of a JSONL file, the next element of an array
    when it can be found again."""

    where: Location
    message: str
    field: str | None = None

    def __str__(self) -> str:
        return f"{self.where}{f' field {self.field!r}' if self.field else ''}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {**self.where.to_json(), "field": self.field, "message": self.message}


@dataclass(slots=True)
class Call:
    """One tool call, in the order the agent made it.

    ``arguments`` is ``None`` when the recorded arguments are not a JSON object (an agent that
    wrote broken JSON): ``raw_arguments`` keeps what was written, and the replay treats the call
    as one with invalid arguments. ``has_output`` tells a recorded empty output from none at all;
    ``output`` is the recorded output, parsed as JSON when it is a JSON text."""

    step: int
    tool: str
    arguments: dict[str, Any] | None
    raw_arguments: str | None = None
    call_id: str | None = None
    requestor: str = "assistant"
    has_output: bool = False
    output: Any = None
    error: bool | None = None
    message_index: int | None = None
    field: str = ""
    """Where the call sits in its record (``messages[3].tool_calls[0]``), for findings."""


@dataclass(slots=True)
class Message:
    """A conversation turn: ``role`` is system, user, assistant or tool; ``calls`` are the steps
    of the tool calls the turn made (assistant turns; user turns in τ²'s telecom domain)."""

    role: str
    text: str | None = None
    calls: tuple[int, ...] = ()


@dataclass(slots=True)
class Trajectory:
    id: str
    task_id: str | None
    shape: str
    where: Location
    messages: list[Message] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    reward: float | None = None
    """The label the file carries (τ² ``reward_info.reward``, τ-bench ``reward``, a ``reward`` or
    ``label`` key): compared with the verifier's verdict."""
    meta: dict[str, Any] = field(default_factory=dict)
    """What else the record says that a report may show: ``termination_reason``, ``trial``, ``agent``."""

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "task_id": self.task_id,
            "shape": self.shape,
            "where": self.where.to_json(),
            "messages": len(self.messages),
            "calls": len(self.calls),
            "reward": self.reward,
        }
