"""The test agent modules of this folder (``cli_agents``, ``cli_idle_agents``) importable by
name for every test here, as ``--agent module:factory`` finds them."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _agents_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
