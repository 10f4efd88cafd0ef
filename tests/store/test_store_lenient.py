"""The lenient loader: every problem collected, a store of the records that load, and the
same tables and digest as ``Store.open`` on a clean pack."""

from __future__ import annotations

import shutil

import pytest

from groundeval.errors import ContractError
from groundeval.store.lenient import StagedPack, load
from groundeval.store.store import Store


def test_clean_pack_loads_like_open(tiny_pack):
    store, problems = load(tiny_pack)
    strict = Store.open(tiny_pack)
    try:
        assert problems == []
        assert store.digest == strict.digest
        assert store.query("SELECT id FROM events ORDER BY id") == strict.query("SELECT id FROM events ORDER BY id")
    finally:
        store.close()
        strict.close()


def test_bad_records_are_collected_and_the_rest_loads(tiny_pack, tmp_path):
    pack = tmp_path / "tiny"
    shutil.copytree(tiny_pack, pack)
    events = pack / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines()
    lines[1] = '{"id": "e2", "type": "customer_escalation"}'  # no timestamp
    lines.append("{not json")
    events.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ContractError):
        Store.open(pack)
    store, problems = load(pack)
    try:
        assert {p.line for p in problems} >= {2, len(lines)}
        ids = [r[0] for r in store.query("SELECT id FROM events ORDER BY id")]
        assert "e2" not in ids and "e1" in ids and len(ids) == len(lines) - 2
    finally:
        store.close()


def test_staged_rows_and_drop(tiny_pack):
    strict = Store.open(tiny_pack)
    staged = StagedPack(strict.paths.events_path, strict.paths.artifacts_path)
    assert staged.loadable and staged.problems == []
    first = staged.events[0]
    assert first.text.startswith("{") and first.key == (first.file, first.line)
    assert all(r.stem for r in staged.artifacts)  # a folder of files: each row names its file stem
    store, rejected = staged.load(strict.manifest, strict.paths, drop=[first.key])
    try:
        assert rejected == []
        assert store.query("SELECT count(*) FROM events")[0][0] == len(staged.events) - 1
        assert not store.sources_unchanged()  # built from chosen records, not stamped with the sources
        assert strict.sources_unchanged()
    finally:
        store.close()
        strict.close()


def test_missing_source_and_bad_manifest(tiny_pack, tmp_path):
    pack = tmp_path / "tiny"
    shutil.copytree(tiny_pack, pack)
    (pack / "events.jsonl").unlink()
    store, problems = load(pack)
    assert store is None and problems and "events" in problems[0].message
    with pytest.raises(ContractError):
        load(pack, collect=False)


def test_rows_taken_from_a_store_come_in_source_order_however_the_store_kept_them(repo_root):
    """``from_store`` streams the kept tables and sorts in Python (one pass when already in
    order): the same rows, in the same order, as staging the sources again, even when the kept
    tables hold them shuffled."""
    from groundeval.contract.manifest import resolve
    from groundeval.store.ingest import KEPT_ARTIFACTS, KEPT_EVENTS

    pack = resolve(repo_root / "domain_packs" / "healthcare")
    paths = Store.open(pack).paths
    fresh = StagedPack(paths.events_path, paths.artifacts_path)
    for shuffle in (False, True):
        store = Store.open(pack, keep_rows=True)
        try:
            if shuffle:
                for t in (KEPT_EVENTS, KEPT_ARTIFACTS):
                    store.con.execute(f"CREATE OR REPLACE TEMP TABLE {t} AS SELECT * FROM {t} ORDER BY hash(text)")
            taken = StagedPack.from_store(store)
            assert taken is not None and len(taken.artifacts) > 1
            assert [(r.file, r.line, r.text) for r in taken.events] == [(r.file, r.line, r.text) for r in fresh.events]
            assert [(r.file, r.stem, r.text) for r in taken.artifacts] == [
                (r.file, r.stem, r.text) for r in fresh.artifacts
            ]
        finally:
            store.close()
