"""Anthropic Messages API with tool use."""

from __future__ import annotations

import os
from typing import Any

from .cache import open_cache as _cache
from .http import JsonClient, RetryPolicy
from .llm import ChatAgent, ChatProtocol, ToolRequest, Turn

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class AnthropicMessages(ChatProtocol):
    provider = "anthropic"

    def start(self, system: str, user: str) -> dict[str, Any]:
        return {"system": system, "messages": [{"role": "user", "content": [{"type": "text", "text": user}]}]}

    def tools(self, neutral: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(t) for t in neutral]

    def complete(self, convo, tools, force, deadline) -> Turn:
        payload: dict[str, Any] = {
            "model": self.model,
            "system": convo["system"],
            "messages": convo["messages"],
            "max_tokens": self.max_tokens or 1024,
        }
        if tools:
            payload["tools"] = tools
            payload["tool_choice"] = {"type": "tool", "name": force} if force else {"type": "auto"}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        body, info = self.client.post("v1/messages", payload, deadline=deadline)
        content = [b for b in (body.get("content") or []) if isinstance(b, dict)]
        text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        calls = []
        for i, b in enumerate(content):
            if b.get("type") != "tool_use":
                continue
            raw = b.get("input")
            calls.append(
                ToolRequest(
                    id=b.get("id") or f"toolu_{i}",
                    name=str(b.get("name") or ""),
                    arguments=raw if isinstance(raw, dict) else None,
                    raw=raw,
                )
            )
        convo["messages"].append({"role": "assistant", "content": content or [{"type": "text", "text": ""}]})
        usage = body.get("usage") or {}
        inp, out = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
        counts = {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}
        for extra in ("cache_creation_input_tokens", "cache_read_input_tokens"):
            if usage.get(extra):
                counts[extra] = int(usage[extra])
        return Turn(text=text, calls=calls, usage=counts, stop_reason=body.get("stop_reason"), retries=info["retries"])

    def add_results(self, convo, results, note=None) -> None:
        blocks: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": req.id, "content": content, "is_error": is_error}
            for req, content, is_error in results
        ]
        if note:
            blocks.append({"type": "text", "text": note})
        if blocks:
            convo["messages"].append({"role": "user", "content": blocks})


def anthropic_agent(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    api_key_env: str | None = None,
    temperature: float | None = 0.0,
    max_tokens: int | None = 1024,
    timeout: float = 60.0,
    retries: int = 4,
    backoff: float = 0.5,
    cache: str | None = None,
) -> ChatAgent:
    """An agent for the Anthropic Messages API (or a compatible server)."""
    key = api_key or os.environ.get(api_key_env or "ANTHROPIC_API_KEY")
    headers = {"anthropic-version": API_VERSION}
    if key:
        headers["x-api-key"] = key
    client = JsonClient(
        base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
        headers=headers,
        timeout=timeout,
        policy=RetryPolicy(retries=retries, base_delay=backoff),
        cache=_cache(cache),
    )
    return ChatAgent(AnthropicMessages(client, model, temperature=temperature, max_tokens=max_tokens))
