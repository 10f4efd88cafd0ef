"""The runtime's BM25 ranks exactly as DuckDB's match_bm25, on both of its query paths."""

from __future__ import annotations

import pytest
from runtime_questions import at

import groundeval.runtime.search_sql as search_sql
from groundeval.runtime.search_sql import scope_facts, search_rows

QUERIES = [
    "INC-42",
    "postmortem INC-42",
    "checkout payment retry",
    "staffing",
    "login slow cache",
    "the and of",
    "Acme escalated ZD-7",
    "ünïcødé checkout",
]


def reference(store, query):
    return [
        r[0]
        for r in store.query(
            "SELECT id FROM (SELECT id, fts_main_artifact_text.match_bm25(id, ?) AS s FROM artifact_text)"
            " WHERE s IS NOT NULL ORDER BY s DESC, id",
            [query],
        )
    ]


@pytest.mark.parametrize("fast", [True, False])
def test_runtime_bm25_matches_duckdb(tiny_store, monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(search_sql, "ensure_search_tables", lambda store: False)
    scope = scope_facts(tiny_store, None, at(20), [])
    for q in QUERIES:
        got = [r[0] for r in search_rows(tiny_store, scope, q, None, 20)]
        assert got == reference(tiny_store, q), q


LONG = "checkout payment retry login slow cache staffing postmortem escalated resolved incident INC-42 ZD-7 acme"


def test_runtime_bm25_many_terms_single_scan_matches_duckdb(tiny_store):
    """More distinct terms than per-term scans: the list-filter variant ranks the same."""
    idx = search_sql.term_index(tiny_store)
    assert len(idx.query_terms(tiny_store, LONG)) > search_sql._MAX_TERM_SCANS
    scope = scope_facts(tiny_store, None, at(20), [])
    assert [r[0] for r in search_rows(tiny_store, scope, LONG, None, 20)] == reference(tiny_store, LONG)


@pytest.mark.parametrize(
    "query", QUERIES + [LONG, "  Mixed.Case--words\tINC-42 \n", "a.b.c", "", "...", "Ünïcødé ß İstanbul ﬁle"]
)
def test_runtime_query_words_equal_fts_tokenize(tiny_store, query):
    idx = search_sql.term_index(tiny_store)
    want = tiny_store.query("SELECT fts_main_artifact_text.tokenize(?)", [query])[0][0]
    assert idx.words(tiny_store, query) == want


def test_runtime_docid_order_fallback_ranks_the_same(tiny_store, monkeypatch):
    """If the index did not number documents in id order, searches use the index tables."""
    idx = search_sql.term_index(tiny_store)
    assert idx.docids_in_id_order  # the tiny pack's index does
    monkeypatch.setattr(idx, "docids_in_id_order", False)
    called = []
    real = search_sql._ranked_index_tables
    monkeypatch.setattr(search_sql, "_ranked_index_tables", lambda *a: called.append(1) or real(*a))
    scope = scope_facts(tiny_store, None, at(20), [])
    for q in QUERIES:
        assert [r[0] for r in search_rows(tiny_store, scope, q, None, 20)] == reference(tiny_store, q), q
    assert called


@pytest.fixture(scope="module")
def twins_store(tmp_path_factory, tiny_pack):
    """The tiny pack plus identical artifacts (equal BM25 scores for every query), whose
    files are written out of id order."""
    import shutil

    from groundeval.store.store import Store

    pack = tmp_path_factory.mktemp("twins") / "pack"
    shutil.copytree(tiny_pack, pack)
    text = (
        '{"title": "Quokka wombat numbat", "timestamp": "2026-03-01T10:00:00Z", "actors": ["alice"],'
        ' "body": "Quokka wombat numbat bilby survey notes."}'
    )
    for name in ["TW-9", "TW-10", "TW-1", "TW-100", "TW-05"]:
        (pack / "artifacts" / "jira" / f"{name}.json").write_text(text + "\n")
    store = Store.open(pack)
    store.ensure_fts()
    yield store
    store.close()


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("query", ["quokka", "quokka wombat numbat", "quokka wombat numbat bilby survey"])
def test_runtime_equal_scores_rank_by_artifact_id(twins_store, monkeypatch, fast, query):
    """Hits with equal scores (sums of 3+ terms included) come in artifact-id order, every run."""
    if not fast:
        monkeypatch.setattr(search_sql, "ensure_search_tables", lambda store: False)
    scope = scope_facts(twins_store, None, at(20), [])
    runs = {tuple(r[0] for r in search_rows(twins_store, scope, query, None, 20)) for _ in range(5)}
    assert len(runs) == 1
    got = list(runs.pop())
    assert got == sorted(f"TW-{n}" for n in ["9", "10", "1", "100", "05"])


@pytest.mark.parametrize("actor", ["alice", "bob", "carol", "dave", None])
def test_runtime_long_principal_set_lists_gate_the_same(tiny_store, monkeypatch, actor):
    """Many allowed principal sets travel as one string parameter; the gate is unchanged."""
    scope = scope_facts(tiny_store, actor, at(20), ["horizon", "subsystem", "actor"])
    queries = QUERIES + ["staffing confidential", "bob alice dm"]
    want = [search_rows(tiny_store, scope, q, None, 20) for q in queries]
    monkeypatch.setattr(search_sql, "_MAX_LIST_PARAM", 0)
    assert [search_rows(tiny_store, scope, q, None, 20) for q in queries] == want
    assert want == [search_sql._ranked_index_tables(tiny_store, scope, q, None, 20) for q in queries]


def test_runtime_display_join_equals_display_cache(tiny_store, monkeypatch):
    """Large corpora join the display columns in SQL; small ones read them from memory."""
    idx = search_sql.term_index(tiny_store)
    assert idx.display is not None
    scope = scope_facts(tiny_store, "bob", at(20), ["horizon", "subsystem", "actor"])
    want = [search_rows(tiny_store, scope, q, None, 20) for q in QUERIES]
    monkeypatch.setattr(idx, "display", None)
    assert [search_rows(tiny_store, scope, q, None, 20) for q in QUERIES] == want
    assert any(want)
