"""The packs bundled with groundeval, found by name.

The repository's ``domain_packs/`` folder installs as the data-only package
``groundeval.domain_packs`` (see ``setup.py``), so ``groundeval eval tiny`` works the same
from a clone, an editable install and an installed wheel. A bundled pack is a folder of
``domain_packs/`` holding a manifest, whose name does not start with ``_`` or ``.``
(``_build/`` is the generator of the packs, not a pack).

A pack argument is a path first: ``tiny`` means ``./tiny`` when that exists, and the
bundled pack only otherwise. Only a bare name (no path separator) is looked up.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ..errors import ContractError

MANIFEST_NAMES = ("groundeval.yaml", "groundeval.yml", "groundeval.json")


def bundled_root() -> Path | None:
    """The folder holding the bundled packs, or None when it is not there."""
    try:
        spec = importlib.util.find_spec("groundeval.domain_packs")
    except (ImportError, ValueError):
        spec = None
    candidates = [Path(p) for p in (spec.submodule_search_locations or [])] if spec is not None else []
    # a source checkout used without installing it: the folder next to the package
    candidates.append(Path(__file__).resolve().parents[2] / "domain_packs")
    for c in candidates:
        if c.is_dir():
            return c
    return None


def bundled_packs() -> dict[str, Path]:
    """Name -> folder of every bundled pack, sorted by name."""
    root = bundled_root()
    if root is None:
        return {}
    out = {}
    for d in sorted(root.iterdir(), key=lambda p: p.name):
        if d.is_dir() and not d.name.startswith(("_", ".")) and any((d / m).is_file() for m in MANIFEST_NAMES):
            out[d.name] = d
    return out


WORLD_NAMES = ("world.yaml", "world.yml")


def bundled_worlds() -> dict[str, Path]:
    """Name -> folder of every bundled world (a folder with a ``world.yaml``; docs/worlds.md)."""
    root = bundled_root()
    if root is None:
        return {}
    return {
        d.name: d
        for d in sorted(root.iterdir(), key=lambda p: p.name)
        if d.is_dir() and not d.name.startswith(("_", ".")) and any((d / m).is_file() for m in WORLD_NAMES)
    }


def is_bare_name(value: str | Path) -> bool:
    text = str(value)
    return bool(text) and "/" not in text and "\\" not in text and text not in (".", "..")


def bundled_pack(name: str | Path) -> Path | None:
    """The bundled pack called ``name`` (a bare name), or None."""
    if not is_bare_name(name):
        return None
    return bundled_packs().get(str(name))


def resolve_pack(value: str | Path) -> Path:
    """``value`` as a path when it exists, else the bundled pack of that name.

    A missing path that names no bundled pack is a :class:`ContractError` listing them."""
    p = Path(value)
    if p.exists() or str(value).startswith("tau2:"):  # tau2:<domain>: a τ²-bench domain as a world
        return p
    found = bundled_pack(value)
    if found is None and is_bare_name(value):
        found = bundled_worlds().get(str(value))
    if found is not None:
        return found
    raise ContractError.single(str(value), not_found_message(value))


def not_found_message(value: str | Path) -> str:
    """What a missing path or name is told: a bare name is looked up among the bundled packs and
    worlds (``run`` and ``eval`` take either; a pack command given a world says so), so both
    lists are shown."""
    if not is_bare_name(value):
        return "no such file or directory"
    packs = ", ".join(bundled_packs()) or "none installed"
    worlds = ", ".join(bundled_worlds()) or "none installed"
    return (
        "no such file or directory, and no bundled pack or world of that name "
        f"(bundled packs: {packs}; bundled worlds: {worlds})"
    )
