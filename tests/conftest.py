"""Shared fixtures: paths to the repository and its bundled packs."""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKS = REPO / "domain_packs"


class _NoTopLevelVerifier(MetaPathFinder):
    """The folder ``verifier/`` installs as ``groundeval.verifier``; a bare ``import verifier``
    would only work here because ``python -m pytest`` puts the repository root on ``sys.path``.
    Refuse it, so no test passes by importing a name a pip user does not have."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: D102
        if fullname == "verifier" or fullname.startswith("verifier."):
            raise ImportError(
                f"import groundeval.verifier, not {fullname!r} (the folder verifier/ installs as groundeval.verifier)",
                name=fullname,
            )
        return None


sys.meta_path.insert(0, _NoTopLevelVerifier())


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def tiny_pack() -> Path:
    return PACKS / "tiny"
