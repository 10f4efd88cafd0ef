"""A store opened with ``keep_rows=True`` (as every command that reads a pack opens it) hands
the verifier the rows it was built from: the verifier checks them instead of reading the
sources again, and reports exactly what it reports when it reads them itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval import verifier
from groundeval.store.ingest import KEPT_ARTIFACTS, KEPT_EVENTS
from groundeval.store.store import Store

from verifier_drafts import TINY, PackDraft

REPO = Path(__file__).resolve().parents[2]


def _kept_tables(store: Store) -> set[str]:
    rows = store.con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
    return {r[0] for r in rows} & {KEPT_EVENTS, KEPT_ARTIFACTS}


def _verify_on_kept(pack, level: int):
    store = Store.open(pack, keep_rows=True)
    try:
        assert _kept_tables(store) == {KEPT_EVENTS, KEPT_ARTIFACTS}
        result = verifier.verify(pack, level=level, store=store)
        assert _kept_tables(store) == set() and store.take_rows() is None  # taken once, then released
        assert store.query("SELECT count(*) FROM events")[0][0] > 0  # the owner's store is intact
    finally:
        store.close()
    return result


@pytest.mark.parametrize("pack", [TINY, REPO / "domain_packs" / "finance"], ids=["tiny-folder", "finance"])
@pytest.mark.parametrize("level", [2, 4])
def test_clean_pack_same_findings_from_kept_rows(pack, level):
    kept = _verify_on_kept(pack, level)
    assert kept.shared_store
    assert kept.to_dict() == verifier.verify(pack, level=level, lenient=True).to_dict()


def test_kept_rows_report_a_shape_finding_and_the_store_is_rebuilt_from_the_sources(tmp_path):
    d = PackDraft(TINY)
    d.artifacts["jira/JIRA-42.json"]["title"] = 5  # the loader takes it; the verifier sets it aside
    d.events[0]["timestamp_note"] = ["not", "allowed"]  # whatever the event schema says of it, both agree
    pack = d.write(tmp_path / "p")
    kept = _verify_on_kept(pack, 3)
    assert not kept.shared_store and kept.by_rule("GE120")
    assert kept.to_dict() == verifier.verify(pack, level=3, lenient=True).to_dict()


def test_rows_of_another_pack_are_not_checked(tmp_path):
    store = Store.open(REPO / "domain_packs" / "finance", keep_rows=True)
    try:
        result = verifier.verify(TINY, level=2, store=store)
        assert _kept_tables(store) == set()  # released even though not taken
    finally:
        store.close()
    assert not result.shared_store
    assert result.to_dict() == verifier.verify(TINY, level=2).to_dict()


def test_without_keep_rows_nothing_is_kept(tmp_path):
    store = Store.open(TINY)
    try:
        assert _kept_tables(store) == set() and store.take_rows() is None
    finally:
        store.close()


def test_a_second_verify_after_the_rows_were_taken_reads_the_sources(tmp_path):
    store = Store.open(TINY, keep_rows=True)
    try:
        first = verifier.verify(TINY, level=2, store=store)
        assert not store.sources_unchanged()  # no fingerprint: the kept rows stood for it
        second = verifier.verify(TINY, level=2, store=store)
    finally:
        store.close()
    assert first.shared_store and not second.shared_store  # read again, so its own store
    assert first.to_dict() == second.to_dict() == verifier.verify(TINY, level=2).to_dict()


def _databases_opened_by_verify(monkeypatch, pack, level: int) -> tuple[int, bool]:
    """(DuckDB databases the verifier's staging opened, whether it used the offered store)."""
    import groundeval.store.lenient as lenient

    opened = []
    real = lenient.duckdb.connect

    def counting(*args, **kwargs):
        opened.append(args)
        return real(*args, **kwargs)

    store = Store.open(pack, keep_rows=True)
    try:
        monkeypatch.setattr(lenient.duckdb, "connect", counting)
        result = verifier.verify(pack, level=level, store=store)
        monkeypatch.undo()
    finally:
        store.close()
    return len(opened), result.shared_store


def test_rows_taken_from_a_store_open_no_second_database_unless_a_store_must_be_rebuilt(monkeypatch, tmp_path):
    """The shape checks' timestamp test runs on the offered store's cursor: a clean pack
    verified on kept rows opens no database of its own (~10 ms and ~3 MB at each command's
    start); one with a record set aside still builds its store of the good rows in one."""
    assert _databases_opened_by_verify(monkeypatch, TINY, 2) == (0, True)
    d = PackDraft(TINY)
    d.artifacts["jira/JIRA-42.json"]["title"] = 5
    opened, shared = _databases_opened_by_verify(monkeypatch, d.write(tmp_path / "p"), 2)
    assert opened == 1 and not shared
