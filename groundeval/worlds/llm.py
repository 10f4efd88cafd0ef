"""LLM parts for worlds, over any OpenAI-compatible chat-completions server (optional: needs
``httpx``, the ``openai`` extra): a user simulator played by a model, and an agent that acts
through the world's tools by tool calling.

The model user's statements are checked against its task like any simulator's
(``simulator.statement_errors``): a fact it invents is a ``user_error``, not the agent's fault.
Both use the existing provider client (``groundeval.agents.http.JsonClient``: retries, backoff,
deadlines), imported only when one is built.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .model import STOP, WorldMessage, WorldTask
from .simulator import asked_confirmation, fact_text

__all__ = ["LLMUser", "LLMWorldAgent"]


def _client(base_url: str, api_key_env: str | None, timeout: float, retries: int, cache: str | None = None):
    from ..agents.cache import open_cache
    from ..agents.http import JsonClient, RetryPolicy
    from ..extras import require

    require("openai", "the LLM user simulator / agent")
    headers = {}
    key = os.environ.get(api_key_env) if api_key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    policy = RetryPolicy(retries=retries)
    return JsonClient(base_url=base_url, headers=headers, timeout=timeout, policy=policy, cache=open_cache(cache))


def _user_system(task: WorldTask, write_tools: Any) -> str:
    u = task.user
    facts = "\n".join(fact_text(k, v) for k, v in u.facts.items()) or "(none)"
    return (
        "You are a customer talking to a support agent. Stay in character; be brief.\n"
        f"Persona: {u.persona or 'polite, brief'}\n"
        f"Your goal: {u.goal or u.opening}\n"
        "Facts you know (give one only when the agent asks for it, exactly as written, as 'key: value'):\n"
        f"{facts}\n"
        f"If asked to confirm one of these actions, answer 'yes': {', '.join(u.confirms) or '(none)'}.\n"
        f"If asked to confirm one of these actions, answer 'no': {', '.join(u.declines) or '(none)'}.\n"
        f"When your goal is met or the agent says it is done, answer exactly {STOP}.\n"
        "Never invent facts you were not given."
    )


class _LLMSession:
    def __init__(self, sim: LLMUser, task: WorldTask, write_tools: list[str] | dict[str, list[str]]):
        self.sim = sim
        self.write_tools = write_tools
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": _user_system(task, write_tools)},
            {"role": "assistant", "content": task.user.opening},
        ]
        self.turns = 0

    def reply(self, message: WorldMessage) -> str:
        self.turns += 1
        if self.turns > self.sim.max_turns:
            return STOP
        text = message.text
        asked = asked_confirmation(message, self.write_tools)
        if message.confirm is not None and asked:
            text += f"\n(The agent asks you to confirm: {asked})"
        self.messages.append({"role": "user", "content": text})
        payload: dict[str, Any] = {"model": self.sim.model, "messages": self.messages, **self.sim.sampling}
        body, _ = self.sim.client.post("chat/completions", payload)
        content = str(((body.get("choices") or [{}])[0].get("message") or {}).get("content") or "").strip()
        self.messages.append({"role": "assistant", "content": content})
        return content or STOP


class _OnModel:
    """A part played by a model on an OpenAI-compatible server: its name, model, client, turns."""

    prefix = ""
    default_turns = 0

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key_env: str | None = None,
        timeout: float = 60.0,
        retries: int = 2,
        max_turns: int | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        cache: str | None = None,
    ):
        self.name = f"{self.prefix}:{model}"
        self.model = model
        self.max_turns = self.default_turns if max_turns is None else max_turns
        self.client = _client(base_url, api_key_env, timeout, retries, cache)
        self.sampling: dict[str, Any] = {"temperature": temperature}
        if max_tokens is not None:
            self.sampling["max_tokens"] = max_tokens


class LLMUser(_OnModel):
    """A user simulator played by a model (temperature 0) from the task's script (20 turns at most
    unless ``max_turns``)."""

    prefix = "llm"
    default_turns = 20

    def session(self, task: WorldTask, write_tools: list[str] | dict[str, list[str]]) -> _LLMSession:
        return _LLMSession(self, task, write_tools)


class LLMWorldAgent(_OnModel):
    """An agent played by a model: the policy as system prompt, the world's tools by tool
    calling; text without a tool call is said to the user, whose reply comes back as the next
    user message. Ends when the user stops, the model says nothing, or after ``max_turns``
    (default 40)."""

    prefix = "openai"
    default_turns = 40

    def run(self, episode: Any) -> None:
        tools = [
            {
                "type": "function",
                "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]},
            }
            for t in episode.tools
        ]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": episode.policy},
            {"role": "user", "content": episode.opening},
        ]
        for _ in range(self.max_turns):
            if episode.done:
                return
            payload = {"model": self.model, "messages": messages, "tools": tools, **self.sampling}
            body, _ = self.client.post("chat/completions", payload)
            msg = (body.get("choices") or [{}])[0].get("message") or {}
            calls = msg.get("tool_calls") or []
            messages.append(
                {"role": "assistant", "content": msg.get("content"), **({"tool_calls": calls} if calls else {})}
            )
            if calls:
                for i, tc in enumerate(calls):
                    fn = tc.get("function") or {}
                    args = fn.get("arguments")
                    try:
                        args = json.loads(args or "{}")
                    except (TypeError, ValueError):
                        pass  # as sent: recorded as WorldEpisode.call records it (issue 30 item 8)
                    out = episode.call(str(fn.get("name") or ""), args)
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": tc.get("id") or f"call_{i}",
                            "content": json.dumps(out, sort_keys=True, default=str),
                        }
                    )
                continue
            text = str(msg.get("content") or "").strip()
            if not text:
                return
            reply = episode.say(text)
            if STOP in reply:
                return
            messages.append({"role": "user", "content": reply})
