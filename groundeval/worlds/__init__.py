"""Worlds: agents that act on a stateful world, in a conversation with a simulated user,
judged from the final state (``docs/worlds.md``).

A world is a folder (``world.yaml``, the policy, state tables, tasks, optional Python tools).
``load_world`` reads it; ``WorldEpisode`` is what an agent drives; ``verdict`` judges a trace
against the world and its task, judge-free. This package imports the contract, store, tasks
and trace primitives only, never the API, CLI or report layers.
"""

from __future__ import annotations

from .load import World, find_world, is_world, load_world
from .model import (
    STOP,
    Action,
    TableDiff,
    ToolDef,
    UserScript,
    WorldCall,
    WorldManifest,
    WorldMessage,
    WorldTask,
    WorldTrace,
    WorldVerdict,
)
from .state import EpisodeState, WorldState, WorldToolError

__all__ = [
    "STOP",
    "Action",
    "EpisodeState",
    "TableDiff",
    "ToolDef",
    "UserScript",
    "World",
    "WorldCall",
    "WorldManifest",
    "WorldMessage",
    "WorldState",
    "WorldTask",
    "WorldToolError",
    "WorldTrace",
    "WorldVerdict",
    "find_world",
    "is_world",
    "load_world",
]
