"""OpenAI-compatible chat completions with tool calling (OpenAI, vLLM, llama.cpp, Ollama …)."""

from __future__ import annotations

import json
import os
from typing import Any

from .cache import open_cache as _cache
from .http import JsonClient, RetryPolicy
from .llm import ChatAgent, ChatProtocol, ToolRequest, Turn

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIChat(ChatProtocol):
    provider = "openai"

    def start(self, system: str, user: str) -> dict[str, Any]:
        return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}

    def tools(self, neutral: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
            }
            for t in neutral
        ]

    def complete(self, convo, tools, force, deadline) -> Turn:
        payload: dict[str, Any] = {"model": self.model, "messages": convo["messages"]}
        if tools:
            payload["tools"] = tools
            payload["tool_choice"] = {"type": "function", "function": {"name": force}} if force else "auto"
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        body, info = self.client.post("chat/completions", payload, deadline=deadline)
        choice = (body.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        calls = []
        for i, tc in enumerate(message.get("tool_calls") or []):
            fn = tc.get("function") or {}
            raw = fn.get("arguments")
            calls.append(
                ToolRequest(
                    id=tc.get("id") or f"call_{i}",
                    name=str(fn.get("name") or ""),
                    arguments=_parse_arguments(raw),
                    raw=raw,
                )
            )
        kept = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            kept["tool_calls"] = message["tool_calls"]
        convo["messages"].append(kept)
        usage = body.get("usage") or {}
        return Turn(
            text=message.get("content") or "",
            calls=calls,
            stop_reason=choice.get("finish_reason"),
            retries=info["retries"],
            usage={
                "input_tokens": int(usage.get("prompt_tokens") or 0),
                "output_tokens": int(usage.get("completion_tokens") or 0),
                "total_tokens": int(usage.get("total_tokens") or 0),
            },
        )

    def add_results(self, convo, results, note=None) -> None:
        for req, content, _is_error in results:
            convo["messages"].append({"role": "tool", "tool_call_id": req.id, "content": content})
        if note:
            convo["messages"].append({"role": "user", "content": note})


def _parse_arguments(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def openai_agent(
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
    """An agent for any OpenAI-compatible ``/chat/completions`` endpoint."""
    key = api_key or os.environ.get(api_key_env or "OPENAI_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    client = JsonClient(
        base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
        headers=headers,
        timeout=timeout,
        policy=RetryPolicy(retries=retries, base_delay=backoff),
        cache=_cache(cache),
    )
    return ChatAgent(OpenAIChat(client, model, temperature=temperature, max_tokens=max_tokens))
