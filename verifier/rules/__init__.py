"""Rules by family: shape (1), references (2), semantics (3), dry run (4)."""

from __future__ import annotations


def load_all() -> None:
    """Import every rule module so its rules and checks are registered."""
    from . import dryrun, references, semantics, shape  # noqa: F401
