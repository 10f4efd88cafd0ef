"""What an agent drives, whatever the contract: the episode interface packs and worlds share.

A pack's episode (:class:`groundeval.runtime.episode.Episode`: a question, gated search and
fetch, an answer) and a world's (``groundeval.worlds.episode.WorldEpisode``: a task, the
world's tools, a simulated user) are both an :class:`EpisodeDriver`: tools are called by name
with JSON arguments and every call — whatever the agent sends — is recorded as a
:class:`groundeval.trace.interface.CallRecord`, never raised; ``done`` says when the episode
has ended (an answer, the user's stop, the step budget). Runners, adapters and the MCP servers
that serve both kinds drive an episode through these two members.
``tests/packaging/test_packaging_interfaces.py`` checks that both kinds implement it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class EpisodeDriver(Protocol):
    """One episode as an agent drives it."""

    @property
    def done(self) -> bool: ...

    def call(self, tool: Any, arguments: Any = None) -> dict[str, Any]: ...


__all__ = ["EpisodeDriver"]
