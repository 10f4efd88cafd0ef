"""Verifier test fixtures (the helpers live in verifier_drafts.py)."""

from __future__ import annotations

import pytest

from verifier_drafts import ORIGINAL, TINY, PackDraft


@pytest.fixture
def draft() -> PackDraft:
    return PackDraft(TINY)


@pytest.fixture
def original_draft() -> PackDraft:
    return PackDraft(ORIGINAL)
