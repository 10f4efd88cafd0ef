"""What every kind of contract records of a tool call: the interface packs and worlds share.

A pack's runtime records :class:`groundeval.trace.model.ToolCall`; a world's records its own
call (``groundeval.worlds.model.WorldCall``, with the call's kind, result and state diff).
Both are a :class:`CallRecord`: the tool named, the arguments as sent, how the call ended and
the governance flags it broke. Code that reads calls across contract kinds (violation rates,
timelines, reports) reads these fields and nothing else. ``tests/packaging/
test_packaging_interfaces.py`` checks that both kinds implement it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class CallRecord(Protocol):
    """One recorded tool call."""

    tool: str  # the name the agent used (an unknown name as sent)
    arguments: dict[str, Any]  # as sent
    status: str  # how it ended: "ok", or why not (the kinds are the contract's own)
    flags: list[Any]  # the governance rules it broke; a call with any flag counts in v
    error: str | None  # what the agent was told went wrong, if anything


__all__ = ["CallRecord"]
