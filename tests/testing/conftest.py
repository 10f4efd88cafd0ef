"""What the pytest-gate tests share: the bundled tiny pack's generated questions (what the
gate under test generates too)."""

from __future__ import annotations

import pytest

from groundeval.questions.generate import generate
from groundeval.store.store import Store


@pytest.fixture(scope="module")
def tiny_questions(tiny_pack):
    store = Store.open(tiny_pack)
    try:
        return generate(store).questions
    finally:
        store.close()
