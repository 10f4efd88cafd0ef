"""Named presets for OpenAI-compatible servers: ``--agent vllm:<model>``, ``ollama:``, ``lmstudio:``,
``openrouter:``, ``together:``, ``groq:`` — the OpenAI adapter with the server's usual base URL and
API-key variable, so no new code (and no URL to look up) is needed for the servers users run.

``--base-url`` and ``--api-key-env`` still override a preset (a vLLM on another port, a key kept
under another name); ``<PRESET>_BASE_URL`` in the environment overrides its URL too. A hosted
service's key is required: without it the agent is refused at once (exit 2) instead of every
request failing with 401.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError


@dataclass(frozen=True)
class Preset:
    name: str
    base_url: str
    key_env: str
    key_required: bool  # hosted services need one; local servers accept any or none
    about: str


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("vllm", "http://localhost:8000/v1", "VLLM_API_KEY", False, "vLLM's OpenAI-compatible server"),
        Preset("ollama", "http://localhost:11434/v1", "OLLAMA_API_KEY", False, "Ollama's OpenAI-compatible API"),
        Preset("lmstudio", "http://localhost:1234/v1", "LMSTUDIO_API_KEY", False, "LM Studio's local server"),
        Preset("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True, "OpenRouter"),
        Preset("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY", True, "Together AI"),
        Preset("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", True, "GroqCloud"),
    )
}


def preset_agent(preset: str, model: str, *, base_url: str | None = None, api_key_env: str | None = None, **opts: Any):
    """The OpenAI adapter configured by ``preset`` (options as :func:`openai_agent`'s)."""
    from .openai_chat import openai_agent

    p = PRESETS[preset]
    env = api_key_env or p.key_env
    key = os.environ.get(env)
    if p.key_required and not key:
        raise UsageError.single(
            "--agent",
            f"{preset}:{model} needs an API key in ${env} ({p.about}); set it, or name another with --api-key-env",
        )
    url = base_url or os.environ.get(f"{preset.upper()}_BASE_URL") or p.base_url
    agent = openai_agent(model, base_url=url, api_key=key or None, api_key_env=env, **opts)
    agent.name = f"{preset}:{model}"
    agent.provider = preset
    return agent


def _factory(preset: str):
    def make(model: str, **opts: Any):
        return preset_agent(preset, model, **opts)

    make.__name__ = preset
    make.__doc__ = f"``{preset}:<model>``: {PRESETS[preset].about} at {PRESETS[preset].base_url}."
    return make


vllm = _factory("vllm")
ollama = _factory("ollama")
lmstudio = _factory("lmstudio")
openrouter = _factory("openrouter")
together = _factory("together")
groq = _factory("groq")
