"""The runtime's BM25 ranks exactly as DuckDB's match_bm25, on both of its query paths."""

from __future__ import annotations

import pytest
from conftest import at

import groundeval.store.search_sql as search_sql
from groundeval.store.search_sql import scope_facts, search_rows

QUERIES = ["INC-42", "postmortem INC-42", "checkout payment retry", "staffing", "login slow cache", "the and of",
           "Acme escalated ZD-7", "ünïcødé checkout"]


def reference(store, query):
    return [r[0] for r in store.query(
        "SELECT id FROM (SELECT id, fts_main_artifact_text.match_bm25(id, ?) AS s FROM artifact_text)"
        " WHERE s IS NOT NULL ORDER BY s DESC, id", [query])]


@pytest.mark.parametrize("fast", [True, False])
def test_runtime_bm25_matches_duckdb(tiny_store, monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(search_sql, "ensure_search_tables", lambda store: False)
    scope = scope_facts(tiny_store, None, at(20), [])
    for q in QUERIES:
        got = [r[0] for r in search_rows(tiny_store, scope, q, None, 20)]
        assert got == reference(tiny_store, q), q
