"""Level 3's graph facts read from the tables of the graph generation builds (the sampled
graph) are the facts of the whole graph (the reference), and the verifier reports the same
either way, also on packs whose links, triggers and responses are shuffled about."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval import verifier
from groundeval.graph.build import build_graph
from groundeval.store.store import Store
from groundeval.verifier import graph_facts
from groundeval.verifier.graph_facts import GraphFacts

from verifier_drafts import REPO, TINY, PackDraft

PACKS = sorted(p.parent for p in (REPO / "domain_packs").glob("*/groundeval.yaml") if not p.parent.name.startswith("_"))


def _facts(f: GraphFacts) -> tuple:
    return f.linked, f.triggered, f.absences, f.ambiguous


def _both(pack: Path) -> tuple[tuple, tuple]:
    store = Store.open(pack)
    try:
        _, fast = graph_facts.build(store)
        return _facts(fast), _facts(GraphFacts.of_graph(build_graph(store, search_spaces=False)))
    finally:
        store.close()


@pytest.mark.parametrize("pack", PACKS, ids=[p.name for p in PACKS])
def test_bundled_packs_same_facts_as_the_whole_graph(pack):
    fast, whole = _both(pack)
    assert fast == whole


TYPES = ["incident_opened", "incident_resolved", "postmortem_written", "customer_escalation", "meeting_held"]
change = st.one_of(
    st.tuples(st.just("type"), st.integers(0, 40), st.sampled_from(TYPES)),
    st.tuples(st.just("hours"), st.integers(0, 40), st.integers(-24 * 8, 24 * 8)),
    st.tuples(st.just("key"), st.integers(0, 40), st.sampled_from(["INC-42", "INC-43", "INC-44", None])),
    st.tuples(st.just("copy"), st.integers(0, 40), st.integers(1, 24 * 6)),
    st.tuples(st.just("drop"), st.integers(0, 40), st.just(0)),
)


def _shuffled(changes) -> PackDraft:
    """The tiny pack with events retyped, moved in time, rekeyed, copied later or dropped."""
    d = PackDraft(TINY)
    for n, (what, i, v) in enumerate(changes):
        events = [e for e in d.events if isinstance(e, dict)]
        if not events:
            break
        e = events[i % len(events)]
        if what == "type":
            e["type"] = v
        elif what == "hours" or what == "copy":
            ts = dt.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")) + dt.timedelta(hours=v)
            if what == "copy":
                e = dict(e, id=f"{e['id']}-c{n}")
                d.events.append(e)
            e["timestamp"] = ts.strftime("%Y-%m-%dT%H:%M:%SZ")
        elif what == "key":
            facts = dict(e.get("facts") or {})
            if v is None:
                facts.pop("incident_id", None)
            else:
                facts["incident_id"] = v
            e["facts"] = facts
        elif len(d.events) > 1:
            d.events.remove(e)
    return d


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(change, max_size=12))
def test_shuffled_packs_same_facts_and_same_report(changes):
    tmp = Path(tempfile.mkdtemp(prefix="ge-facts-"))
    try:
        pack = _shuffled(changes).write(tmp / "p")
        fast, whole = _both(pack)
        assert fast == whole
        real = graph_facts.build
        report = verifier.verify(pack, level=4).to_dict()
        graph_facts.build = lambda store: (g := build_graph(store, search_spaces=False), GraphFacts.of_graph(g))
        try:
            reference = verifier.verify(pack, level=4).to_dict()
        finally:
            graph_facts.build = real
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert json.dumps(report, sort_keys=True) == json.dumps(reference, sort_keys=True)
