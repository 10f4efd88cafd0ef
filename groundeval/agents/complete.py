"""One text completion through the provider adapters: what question prose and judges need.

``text_model("openai:gpt-4o-mini")`` speaks the same wire formats, retry policy and error
messages as the LLM agents (:mod:`.openai_chat`, :mod:`.anthropic_messages`, :mod:`.http`),
without tools: a system prompt and a user message in, the reply's text out. The extra is
checked first, so a missing ``httpx`` is one line naming the install command.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..errors import ContractError
from .http import ProviderError


@dataclass
class Completion:
    text: str
    usage: dict[str, int]
    retries: int = 0


class TextModel:
    """A provider model answering one prompt at a time (``complete``). Thread-safe as the
    agents are: each call builds its own conversation."""

    def __init__(self, protocol: Any):
        self.protocol = protocol
        self.provider = protocol.provider
        self.model = protocol.model
        self.name = f"{protocol.provider}:{protocol.model}"

    def complete(self, system: str, user: str, *, timeout: float | None = None) -> Completion:
        """The reply to ``user`` under ``system``. Raises :class:`ProviderError`."""
        deadline = time.monotonic() + timeout if timeout else None
        convo = self.protocol.start(system, user)
        turn = self.protocol.complete(convo, [], None, deadline)
        return Completion(text=turn.text or "", usage=dict(turn.usage), retries=turn.retries)

    def settings(self) -> dict[str, Any]:
        c = self.protocol.client
        return {
            "base_url": c.base_url,
            "temperature": self.protocol.temperature,
            "max_tokens": self.protocol.max_tokens,
        }

    def close(self) -> None:
        self.protocol.client.close()


def text_model(spec: str, *, option: str = "--judge", **opts: Any) -> TextModel:
    """A :class:`TextModel` for ``provider:model`` (``openai:<model>`` or ``anthropic:<model>``).

    ``opts``: ``base_url``, ``api_key_env``, ``api_key``, ``temperature``, ``max_tokens``,
    ``timeout``, ``retries`` (``None`` values take the adapter's defaults). ``option`` names
    the command-line option in error messages."""
    from .registry import PROVIDERS, create, load_target

    spec = (spec or "").strip()
    head, sep, model = spec.partition(":")
    if not sep or head not in PROVIDERS or not model:
        known = " or ".join(f"'{p}:<model>'" for p in sorted(PROVIDERS))
        raise ContractError.single(option, f"expected {known}, got {spec!r}")
    from ..extras import require

    require(head, f"{option} {spec}")
    opts = {k: v for k, v in opts.items() if v is not None}
    agent = create(load_target(PROVIDERS[head], spec), spec, model, **opts)
    return TextModel(agent.protocol)


__all__ = ["Completion", "ProviderError", "TextModel", "text_model"]
