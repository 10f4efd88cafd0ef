"""Shared fixtures: paths to the repository and its bundled packs."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKS = REPO / "domain_packs"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def tiny_pack() -> Path:
    return PACKS / "tiny"
