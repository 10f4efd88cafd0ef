"""The agent protocol: what the runner asks of any agent, built-in or a user's own.

An agent gets an open runtime episode and drives it — ``episode.search`` /
``fetch`` / ``submit`` (or ``episode.call`` for raw LLM tool calls) in tool mode,
``episode.context()`` + ``submit`` in context mode, ``submit`` alone in zero-shot
mode — until it submits or the step budget runs out. Everything it does is
recorded by the episode; an agent never needs to (and should not) raise for its
own mistakes.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

MODES = ("tool", "context", "zero-shot")


@runtime_checkable
class Agent(Protocol):
    """Anything with a ``name`` and a ``run(episode)`` method."""

    name: str

    def run(self, episode: Any) -> None:
        """Drive ``episode`` until it is done (submitted or out of budget)."""


def mode_of(episode: Any) -> str:
    """The episode's mode (``tool`` when the object does not say)."""
    return getattr(episode, "mode", "tool") or "tool"


def describe(agent: Any) -> dict[str, Any]:
    """Run metadata for an agent: name, model and settings when it has them."""
    info: dict[str, Any] = {"name": getattr(agent, "name", type(agent).__name__)}
    for key in ("model", "provider"):
        value = getattr(agent, key, None)
        if value is not None:
            info[key] = value
    settings = getattr(agent, "settings", None)
    if callable(settings):
        info["settings"] = settings()
    return info
