"""GE204's counts come from one query over every (event type, path) pair; each pair's counts
equal the query of that pair alone, whatever the pairs (repeated, resolving nowhere, a type
with no events)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval.contract.paths import json_paths
from groundeval.store.store import Store
from groundeval.verifier import sql

from verifier_drafts import TINY

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("pack", [TINY, REPO / "domain_packs" / "finance"], ids=["tiny", "finance"])
def test_batched_coverage_equals_one_query_per_pair(pack):
    store = Store.open(pack)
    try:
        ev = store.manifest.evaluation
        dotted = {j.cause for s in ev.causal_links for j in s.join} | {
            j.effect for s in ev.causal_links for j in s.join
        }
        dotted |= {j.trigger for s in ev.silence_pairs for j in s.join} | {"facts.nope", "actors", "id", "type"}
        types = [t for (t,) in store.query("SELECT DISTINCT type FROM events ORDER BY type")] + ["no_such_type"]
        pairs = [(t, d) for t in types for d in sorted(dotted)]
        pairs += pairs[:3]  # repeated pairs count the same
        batched = sql.path_coverages(store, [(t, json_paths(d)) for t, d in pairs])
        one_by_one = [sql.path_coverage(store, t, d) for t, d in pairs]
        assert batched == one_by_one
        assert any(h for _, h in one_by_one) and any(n and not h for n, h in one_by_one)  # both outcomes occur
        assert sql.path_coverages(store, []) == []
    finally:
        store.close()
