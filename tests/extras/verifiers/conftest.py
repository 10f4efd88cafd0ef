"""Tests of the ``verifiers`` extra. Each module skips itself (naming the install command) when
``verifiers`` is missing — unless GROUNDEVAL_REQUIRE_EXTRAS=1, when a missing package is a
collection error, so CI can never skip these silently."""

from __future__ import annotations

import importlib.util
import os

import pytest

INSTALL = (
    "bash .ci/extras/verifiers.sh, or: python3 -m venv .venv-verifiers && "
    ".venv-verifiers/bin/pip install -e '.[verifiers]' pytest hypothesis — a venv of its own: "
    "verifiers 0.4 pins mcp==2.0.0, groundeval's mcp/dev extras need mcp>=2.3"
)

if os.environ.get("GROUNDEVAL_REQUIRE_EXTRAS") == "1" and importlib.util.find_spec("verifiers") is None:
    raise ImportError(f"GROUNDEVAL_REQUIRE_EXTRAS=1 but 'verifiers' is not installed: {INSTALL}")


@pytest.fixture(scope="module")
def tiny_questions():
    """``(store, questions)`` of the tiny pack (default seed)."""
    import groundeval

    store = groundeval.load("tiny")
    qs = groundeval.generate(store)
    yield store, qs
    store.close()


@pytest.fixture(scope="module")
def shop():
    """The test world ``tests/worlds/shop``."""
    from pathlib import Path

    from groundeval.worlds import load_world

    w = load_world(Path(__file__).resolve().parents[2] / "worlds" / "shop")
    yield w
    w.close()
