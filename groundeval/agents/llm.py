"""The agent loop shared by every LLM provider.

A provider adapter implements one thing — :meth:`ChatProtocol.complete`, a single
completion turn — plus the bookkeeping of its wire format. :class:`ChatAgent` owns
the loop: prompts, tool specs, the step budget, forcing ``submit_answer`` on the
last step, feeding tool results back, and recording token usage per call. Tool
calls go to ``episode.call`` untouched (bad JSON arguments and unknown tools
included), so the runtime records every mistake and nothing is raised for them.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from .base import mode_of
from .http import JsonClient, ProviderError

SUBMIT = "submit_answer"

SYSTEM_PROMPT = {
    "tool": (
        "You answer questions about an organisation's records. Use the tools to search and "
        "fetch artifacts. Answer from the point of view of the question's actor and date: "
        "use only what that actor could access as of that date. Cite the ids of the artifacts "
        "you relied on where the answer schema asks for evidence. Finish by calling "
        "submit_answer exactly once with an answer that matches the answer schema."
    ),
    "context": (
        "You answer questions about an organisation's records. The artifacts you may use are "
        "given below; there are no search tools. Cite the ids of the artifacts you relied on "
        "where the answer schema asks for evidence. Call submit_answer with an answer that "
        "matches the answer schema."
    ),
    "zero-shot": (
        "You answer questions about an organisation's records without access to them. "
        "Call submit_answer with your best answer matching the answer schema."
    ),
}
NUDGE = "Reply with a tool call. When you are done, call submit_answer."


@dataclass
class ToolRequest:
    """One tool call as the model sent it; ``arguments`` is None when they did not parse."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw: Any = None


@dataclass
class Turn:
    """One completion: text, tool calls, token usage and retry info."""

    text: str = ""
    calls: list[ToolRequest] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None
    retries: int = 0


class ChatProtocol(ABC):
    """A provider's wire format. ``complete`` is the only network call."""

    provider: str = ""

    def __init__(
        self, client: JsonClient, model: str, *, temperature: float | None = 0.0, max_tokens: int | None = 1024
    ):
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens

    @abstractmethod
    def start(self, system: str, user: str) -> dict[str, Any]:
        """A new conversation state."""

    @abstractmethod
    def tools(self, neutral: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Neutral specs (name, description, input_schema) in this provider's format."""

    @abstractmethod
    def complete(
        self, convo: dict[str, Any], tools: list[dict[str, Any]], force: str | None, deadline: float | None
    ) -> Turn:
        """One completion turn; appends the assistant message to ``convo``."""

    @abstractmethod
    def add_results(
        self, convo: dict[str, Any], results: list[tuple[ToolRequest, str, bool]], note: str | None = None
    ) -> None:
        """Feed tool results (request, content, is_error) and an optional user note back."""


def neutral_tools(names: tuple[str, ...], answer_schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The runtime's tool specs restricted to ``names``, ``submit_answer`` typed by the
    question's own answer schema so the model sees exactly what is expected."""
    from ..runtime.tools import tool_specs

    return [t for t in tool_specs("anthropic", answer_schema) if t["name"] in names]


def user_prompt(episode: Any, mode: str) -> str:
    parts = ["Question:", json.dumps(episode.public_question(), indent=2, sort_keys=True, default=str)]
    if mode == "context":
        parts += ["Artifacts you may use:", json.dumps(episode.context(), indent=2, sort_keys=True, default=str)]
    return "\n\n".join(parts)


class ChatAgent:
    """An LLM agent over any :class:`ChatProtocol`. Safe to share between threads."""

    def __init__(self, protocol: ChatProtocol, *, name: str | None = None):
        self.protocol = protocol
        self.provider = protocol.provider
        self.model = protocol.model
        self.name = name or f"{protocol.provider}:{protocol.model}"

    def settings(self) -> dict[str, Any]:
        c = self.protocol.client
        return {
            "base_url": c.base_url,
            "temperature": self.protocol.temperature,
            "max_tokens": self.protocol.max_tokens,
            "timeout": c.timeout,
            "retries": c.policy.retries,
            **({"cache": str(c.cache.folder)} if getattr(c, "cache", None) is not None else {}),
        }

    def run(self, episode: Any) -> None:
        mode = mode_of(episode)
        names = ("search_artifacts", "fetch_artifact", SUBMIT) if mode == "tool" else (SUBMIT,)
        public = episode.public_question()
        tools = self.protocol.tools(neutral_tools(names, public.get("answer_schema")))
        convo = self.protocol.start(SYSTEM_PROMPT[mode], user_prompt(episode, mode))
        deadline = getattr(episode, "deadline", None)
        idle = 0
        turns_left = getattr(episode, "steps_left", 30) * 2 + 4  # a model that never calls a tool stops too
        while not episode.done and turns_left > 0:
            turns_left -= 1
            force = SUBMIT if (episode.steps_left <= 1 or idle >= 2) else None
            turn = self.protocol.complete(convo, tools, force, deadline)
            _record(episode, turn)
            if not turn.calls:
                idle += 1
                self.protocol.add_results(convo, [], NUDGE)
                continue
            idle = 0
            results = []
            for req in turn.calls:
                if episode.done:
                    break
                # unparsable arguments go to the runtime as sent: it records them as an invalid call
                result = episode.call(req.name, req.arguments if req.arguments is not None else req.raw)
                is_error = isinstance(result, dict) and result.get("status") not in (None, "ok")
                results.append((req, json.dumps(result, sort_keys=True, default=str), is_error))
            if not episode.done:
                self.protocol.add_results(convo, results)

    def close(self) -> None:
        self.protocol.client.close()


def _record(episode: Any, turn: Turn) -> None:
    """Token usage per call: totals in ``trace.usage``, the call's own figures in ``trace.messages``."""
    trace = episode.trace
    usage = trace.usage
    for key, value in turn.usage.items():
        usage[key] = usage.get(key, 0) + int(value)
    usage["requests"] = usage.get("requests", 0) + 1
    usage["retries"] = usage.get("retries", 0) + turn.retries
    message = {
        "role": "assistant",
        "content": turn.text,
        "tool_calls": [r.name for r in turn.calls],
        "stop_reason": turn.stop_reason,
        "usage": dict(turn.usage),
    }
    note = getattr(episode, "note", None)
    if callable(note):
        note(message)
    else:
        trace.messages.append(message)


__all__ = ["ChatAgent", "ChatProtocol", "ProviderError", "ToolRequest", "Turn", "neutral_tools"]
