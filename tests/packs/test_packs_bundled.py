"""Every bundled pack loads, and the domain packs are rich enough for all three tracks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from groundeval.store.store import Store

PACKS = Path(__file__).resolve().parents[2] / "domain_packs"
ALL = sorted(p.name for p in PACKS.iterdir() if p.is_dir() and (p / "groundeval.yaml").is_file())
DOMAINS = [p for p in ALL if p != "tiny"]


def test_the_five_domains_are_bundled():
    assert {"enterprise-support", "cybersecurity", "finance", "healthcare", "legal"} <= set(DOMAINS)


@pytest.mark.parametrize("name", ALL)
def test_pack_loads(name):
    store = Store.open(PACKS / name)
    try:
        s = store.summary()
        assert s["name"] == name and s["events"] > 0 and s["artifacts"] > 0
        # every artifact referenced by an event exists
        assert (
            store.query(
                "SELECT count(*) FROM event_artifacts ea LEFT JOIN artifacts a ON a.id = ea.artifact_id"
                " WHERE a.id IS NULL"
            )[0][0]
            == 0
        )
    finally:
        store.close()


@pytest.mark.parametrize("name", DOMAINS)
def test_domain_pack_is_rich(name):
    store = Store.open(PACKS / name)
    try:
        q, m = store.query, store.manifest
        assert 60 <= q("SELECT count(*) FROM events")[0][0] <= 150
        assert len(q("SELECT DISTINCT subsystem FROM artifacts")) >= 5
        assert q("SELECT count(*) FROM artifacts WHERE restricted")[0][0] >= 10
        assert q("SELECT count(*) FROM actor_roles WHERE since > '-infinity'::TIMESTAMPTZ")[0][0] >= 1  # a hire
        assert q("SELECT count(*) FROM actor_roles WHERE until < 'infinity'::TIMESTAMPTZ")[0][0] >= 1  # a departure
        assert any(r.external for r in m.access.roles.values())
        assert any(r.broadcast_event_types for r in m.access.roles.values())
        assert len(m.evaluation.causal_links) >= 4 and all(c.join for c in m.evaluation.causal_links)
        assert len(m.evaluation.silence_pairs) >= 3
        assert all(s.search_space_selectors for s in m.evaluation.silence_pairs)
        assert (PACKS / name / "README.md").read_text(encoding="utf-8").count("**") >= 6
        # actors acting in events are declared and hold a role at that moment
        bad = q("""SELECT ea.event_id, ea.actor FROM event_actors ea JOIN events e ON e.id = ea.event_id
                   WHERE NOT EXISTS (SELECT 1 FROM actor_roles r WHERE r.actor = ea.actor
                                     AND r.since <= e.ts AND e.ts < r.until) ORDER BY 1, 2""")
        assert bad == []
    finally:
        store.close()


@pytest.mark.parametrize("name", DOMAINS)
def test_silence_pairs_have_both_kinds_and_no_ambiguity(name):
    graph = pytest.importorskip("groundeval.graph.build")
    store = Store.open(PACKS / name)
    try:
        g = graph.build_graph(store)
        assert g.ambiguous == []
        assert len(g.absences) >= 4 and len(g.presences) >= 4
        assert len(g.causal_edges) >= 10 and len(g.distractors) >= 4  # Counterfactual negatives exist
    finally:
        store.close()


def test_committed_packs_match_their_builder(tmp_path):
    """The packs are generated data: rebuilding them must reproduce the committed bytes."""
    sys.path.insert(0, str(PACKS / "_build"))
    try:
        from domains import DOMAINS as SPECS
        from engine import PackBuilder
    finally:
        sys.path.pop(0)
    assert sorted(d.name for d in SPECS) == DOMAINS
    for domain in SPECS:
        b = PackBuilder(domain)
        b.build()
        assert b.check() == []
        out = tmp_path / domain.name
        b.write(out)
        built = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        committed = {
            p.relative_to(PACKS / domain.name): p.read_bytes()
            for p in sorted((PACKS / domain.name).rglob("*"))
            if p.is_file()
        }
        assert built == committed, domain.name
