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


@pytest.fixture(scope="session", autouse=True)
def _private_traces_dir(tmp_path_factory):
    """``serve`` records traces by default under $GROUNDEVAL_TRACES_DIR: never the user's own
    folder during tests (servers started as subprocesses inherit it)."""
    import os

    old = os.environ.get("GROUNDEVAL_TRACES_DIR")
    os.environ["GROUNDEVAL_TRACES_DIR"] = str(tmp_path_factory.mktemp("default-traces"))
    yield
    if old is None:
        os.environ.pop("GROUNDEVAL_TRACES_DIR", None)
    else:
        os.environ["GROUNDEVAL_TRACES_DIR"] = old
