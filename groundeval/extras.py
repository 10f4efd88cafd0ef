"""Optional parts behind extras: a missing one is one line naming the install command.

``require("mcp", "groundeval serve")`` imports what the extra provides and, when any of
it is missing, raises a :class:`ContractError` (the CLI prints it on one line and exits 2)::

    error: groundeval serve: needs the 'mcp' extra (module 'anyio' is not installed): pip install 'groundeval[mcp]'
"""

from __future__ import annotations

import importlib

from .errors import ContractError

# extra -> the modules it must make importable (the extras of pyproject.toml)
EXTRAS: dict[str, tuple[str, ...]] = {
    "mcp": ("anyio", "mcp", "mcp.server", "mcp_types"),
    "openai": ("httpx",),
    "anthropic": ("httpx",),
}


def install_command(extra: str) -> str:
    return f"pip install 'groundeval[{extra}]'"


def missing_module(extra: str) -> str | None:
    """The first module of ``extra`` that cannot be imported, or None."""
    for module in EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return exc.name or module
    return None


def require(extra: str, feature: str) -> None:
    """Raise a one-line :class:`ContractError` when ``extra`` is not installed."""
    missing = missing_module(extra)
    if missing is not None:
        raise ContractError.single(
            feature, f"needs the '{extra}' extra (module '{missing}' is not installed): {install_command(extra)}"
        )
