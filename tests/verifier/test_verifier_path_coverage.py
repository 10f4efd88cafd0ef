"""GE204's counts come from one query over every (event type, path) pair; each pair's counts
equal the query of that pair alone, whatever the pairs (repeated, resolving nowhere, a type
with no events)."""

from __future__ import annotations

import json
import shutil
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


def test_a_value_counts_as_the_one_query_per_pair_reads_it(tmp_path):
    """A null, an empty list or a missing key do not resolve; any other value does (an empty
    text, 0, an object, a list with a member). A pair with several candidate paths resolves where
    any of them does; the same path in several pairs and a path no record has keep their own
    counts, equal to the one-pair query's."""
    pack = tmp_path / "tiny"
    shutil.copytree(TINY, pack)
    values = [None, [], [1], "", 0, {}]
    with (pack / "events.jsonl").open("a", encoding="utf-8") as f:
        for n, value in enumerate([*values, "absent"]):
            facts = {} if value == "absent" else {"k": value}
            event = {"id": f"edge{n}", "type": "edge_case", "timestamp": "2026-03-05T09:00:00Z", "facts": facts}
            f.write(json.dumps(event) + "\n")
    store = Store.open(pack)
    try:
        singles = ["facts.k", None, "facts.nope", "facts.k", "facts.incident_id"]
        pairs = [("edge_case", json_paths("facts.k")), ("edge_case", ['$."facts"."nope"', '$."facts"."k"'])]
        pairs += [("edge_case", json_paths("facts.nope")), ("incident_opened", json_paths("facts.k"))]
        pairs += [("incident_opened", json_paths("facts.incident_id"))]
        batched = sql.path_coverages(store, pairs)
        for (etype, _), dotted, counts in zip(pairs, singles, batched):
            if dotted is not None:
                assert counts == sql.path_coverage(store, etype, dotted)
        assert batched[:3] == [(7, 4), (7, 4), (7, 0)]  # the second: the first path is nowhere, the other is
        assert batched[3][1] == 0 and batched[4][1] == batched[4][0] > 0
    finally:
        store.close()
