"""A fetch lists the same referencing events whether the fetch index keeps them in memory
(small corpora) or reads them per fetch from its table sorted by artifact (large ones)."""

from __future__ import annotations

import pytest

from groundeval.runtime import search_sql
from groundeval.runtime.search_sql import FetchIndex
from groundeval.store.store import Store
from groundeval.synth.generate import write_org


@pytest.fixture(scope="module")
def org_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("org")
    write_org(root / "org", events=3000, seed=3, jobs=1)
    store = Store.open(root / "org")
    yield store
    store.close()


@pytest.mark.slow
@pytest.mark.parametrize("which", ["tiny", "org"])
def test_events_per_fetch_equal_events_in_memory(request, monkeypatch, which):
    store = request.getfixturevalue("tiny_store" if which == "tiny" else "org_store")
    in_memory = FetchIndex(store)
    monkeypatch.setattr(FetchIndex, "EVENTS_IN_MEMORY", 0)
    per_fetch = FetchIndex(store)
    assert in_memory._events is not None and per_fetch._events is None
    assert per_fetch.meta == in_memory.meta
    ids = sorted(in_memory.meta) + ["no-such-artifact"]
    assert [per_fetch.events(a) for a in ids] == [in_memory.events(a) for a in ids]
    assert any(in_memory.events(a) for a in ids)


def test_a_store_that_cannot_build_the_table_keeps_the_events_in_memory(tiny_store, monkeypatch):
    monkeypatch.setattr(FetchIndex, "EVENTS_IN_MEMORY", 0)
    monkeypatch.setattr(search_sql, "_events_table", lambda store: False)
    assert FetchIndex(tiny_store)._events is not None
