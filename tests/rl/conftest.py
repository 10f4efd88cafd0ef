"""Shared fixtures: the tiny pack's store and questions (opened once per session)."""

from __future__ import annotations

import pytest

import groundeval


@pytest.fixture(scope="session")
def tiny(tiny_pack):
    store = groundeval.load(tiny_pack)
    qs = groundeval.generate(store)
    yield store, qs
    store.close()
