"""A pack reads only inside its own folder, unless the user names an outside path.

A pack is untrusted input: its manifest's ``sources`` may say ``../../home/me/.ssh`` or
``/etc``, and an artifact file may be a symlink to any file on the machine. Whatever a pack
reads becomes fetchable and searchable by the agents it is served to, so every path a pack
makes groundeval read is resolved (symlinks followed) and must fall inside the pack's folder
— for an artifact file, inside the artifacts folder — or inside a path the user named on the
command line (``groundeval --allow-outside PATH ...``, repeatable) or through the API
(:func:`allow_outside`). Anything else is a located error saying how to allow it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

_LOCK = threading.Lock()
_ALLOWED: tuple[Path, ...] = ()

FLAG = "--allow-outside"


def allow_outside(paths: Iterable[str | os.PathLike[str]]) -> tuple[Path, ...]:
    """Let packs read inside ``paths`` too (resolved now; replaces the previous list). Returns the list."""
    global _ALLOWED
    resolved = tuple(sorted({Path(os.path.realpath(p)) for p in paths}))
    with _LOCK:
        _ALLOWED = resolved
    return resolved


def allowed_outside() -> tuple[Path, ...]:
    """The outside paths the user allowed (resolved, sorted)."""
    return _ALLOWED


def _within(real: Path, base: Path) -> bool:
    return real == base or base in real.parents


def outside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> Path | None:
    """``path`` resolved (symlinks followed) when it lies outside ``root`` (resolved) and every
    allowed path; ``None`` when reading it is allowed."""
    real = Path(os.path.realpath(path))
    if _within(real, Path(os.path.realpath(root))) or any(_within(real, base) for base in _ALLOWED):
        return None
    return real


def refusal(what: str, real: Path, root: str | os.PathLike[str], folder: str = "the pack's folder") -> str:
    """The message for ``what`` (e.g. ``the events source '../x'``) resolving to ``real`` outside ``root``."""
    return (
        f"{what} resolves to {real}, outside {folder} {os.path.realpath(root)}: a pack reads only "
        f"inside its folder; to allow this path, name it on the command line: groundeval {FLAG} {real} <command> ..."
    )
