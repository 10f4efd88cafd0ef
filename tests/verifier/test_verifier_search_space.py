"""GE303 asks only whether an absence's search space is empty: the cheap answer must
match the generator's full search space (trigger artifacts, id templates, BM25 hits)."""

from __future__ import annotations

from pathlib import Path

import pytest
from groundeval.verifier.rules.semantics import empty_search_spaces
from verifier_drafts import TINY, PackDraft

from groundeval import verifier
from groundeval.graph.build import build_graph, with_search_spaces
from groundeval.store.store import Store

REPO = Path(__file__).resolve().parents[2]


def _no_trigger_artifacts(d):
    d.event("e7")["artifact_ids"] = {}


def _query_only(d, query):
    _no_trigger_artifacts(d)
    spec = d.manifest["evaluation"]["silence_pairs"][0]
    spec["search_space_subsystems"] = []
    spec["search_space_selectors"] = [{"subsystem": "confluence", "query_template": query}]


def _id_hit(d):
    _no_trigger_artifacts(d)
    spec = d.manifest["evaluation"]["silence_pairs"][0]
    spec["search_space_subsystems"] = []
    # The PM- page of the other incident exists, so the template resolves.
    spec["search_space_selectors"] = [{"subsystem": "confluence", "id_template": "PM-42"}]


VARIANTS = {
    "as_bundled": (lambda d: None, False),
    "no_trigger_artifacts": (_no_trigger_artifacts, False),  # the BM25 selector still finds pages
    "query_hits": (lambda d: _query_only(d, "postmortem {facts.incident_id}"), False),
    "query_misses": (lambda d: _query_only(d, "zzyzx {facts.incident_id}"), True),
    "id_template_hits": (_id_hit, False),
}


def _full_empty(store: Store) -> list[tuple[str, str]]:
    g = build_graph(store, search_spaces=False)
    return sorted(
        (r.spec, r.trigger_event_id)
        for r in with_search_spaces(store, g.absences, g.events)
        if not r.expected_search_space
    )


def _cheap_empty(store: Store) -> list[tuple[str, str]]:
    g = build_graph(store, search_spaces=False)
    return sorted((r.spec, r.trigger_event_id) for r in empty_search_spaces(store, g.absences, g.events))


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_cheap_empty_space_matches_full_search_space(name, tmp_path):
    mutate, fires = VARIANTS[name]
    d = PackDraft(TINY)
    mutate(d)
    pack = d.write(tmp_path / name)
    store = Store.open(pack)
    try:
        full = _full_empty(store)
        assert _cheap_empty(store) == full
        assert bool(full) == fires
    finally:
        store.close()
    result = verifier.verify(pack, level=3)
    assert bool(result.by_rule("GE303")) == fires
    assert [f.record for f in result.by_rule("GE303")] == [t for _, t in full]


@pytest.mark.parametrize("pack", ["cybersecurity", "finance"])
def test_cheap_empty_space_matches_on_bundled_packs(pack):
    store = Store.open(REPO / "domain_packs" / pack)
    try:
        assert _cheap_empty(store) == _full_empty(store)
    finally:
        store.close()


@pytest.mark.parametrize("pack", ["tiny", "cybersecurity"])
def test_only_trigger_events_are_fetched(pack, monkeypatch):
    """At 1M events the lazy index must not load every involved event for GE303, nor the
    triggers whose own artifacts settle it."""
    from groundeval.graph.sql import GraphSQL

    fetched: list[set[str]] = []
    real = GraphSQL.events_info

    def spy(self, ids):
        ids = set(ids)
        fetched.append(ids)
        return real(self, ids)

    store = Store.open(REPO / "domain_packs" / pack)
    try:
        g = build_graph(store, search_spaces=False)
        triggers = {r.trigger_event_id for r in g.absences}
        assert len(g.events) > len(triggers)  # a full load would fetch more than the triggers
        bare = {t for t in triggers if not g.events[t].artifacts}  # (loads every involved event)
        g = build_graph(store, search_spaces=False)
        monkeypatch.setattr(GraphSQL, "events_info", spy)
        empty_search_spaces(store, g.absences, g.events)
        assert set().union(*fetched) <= bare  # just the triggers without found artifacts
    finally:
        store.close()
