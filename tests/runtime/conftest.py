"""Runtime test fixtures: the tiny pack's store (questions are built by runtime_questions.py)."""

from __future__ import annotations

import pytest

from groundeval.store.store import Store


@pytest.fixture(scope="session")
def tiny_store(tiny_pack):
    store = Store.open(tiny_pack)
    store.ensure_fts()
    yield store
    store.close()
