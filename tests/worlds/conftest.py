"""Shared fixtures of the world tests: the test world ``shop`` and copies of it to break."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from groundeval.worlds import load_world

SHOP = Path(__file__).resolve().parent / "shop"


@pytest.fixture(scope="module")
def shop():
    w = load_world(SHOP)
    yield w
    w.close()


@pytest.fixture
def shop_copy(tmp_path) -> Path:
    dest = tmp_path / "shop"
    shutil.copytree(SHOP, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest
