"""Contract test fixtures: a writable copy of the tiny pack."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture()
def pack(tmp_path, tiny_pack) -> Path:
    dst = tmp_path / "pack"
    shutil.copytree(tiny_pack, dst)
    return dst
