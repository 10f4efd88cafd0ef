"""Artifact folders (one JSON file per artifact) are staged by Python reads streamed into
DuckDB: the same tables and digest as the JSONL layout of the same corpus, at pack scale,
and located errors for files that cannot be read as text."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from groundeval.errors import ContractError
from groundeval.store.ingest import json_files
from groundeval.store.store import Store, fingerprint
from groundeval.synth.generate import write_org

from test_store_load import dump_tables  # noqa: E402 (rootdir-relative test module)


def _jsonl_copy(src: Path, dst: Path) -> Path:
    """The same original-format pack with its artifact folder written as one JSONL file."""
    dst.mkdir(parents=True)
    shutil.copy(src / "events.jsonl", dst / "events.jsonl")
    config = (src / "config.yaml").read_text(encoding="utf-8")
    (dst / "config.yaml").write_text(config + "\nartifacts_dir: corpus.jsonl\n", encoding="utf-8")
    with open(dst / "corpus.jsonl", "w", encoding="utf-8") as out:
        for name in json_files(src / "artifacts"):
            f = Path(name)
            rec = json.loads(f.read_text(encoding="utf-8"))
            rec = {"id": rec.pop("id", f.stem), "subsystem": rec.pop("subsystem", f.parent.name), **rec}
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return dst


@pytest.fixture(scope="module")
def synth_folder_pack(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "org"
    write_org(out, events=23500, seed=3, fmt="original", jobs=1)
    return out


@pytest.mark.slow
def test_folder_and_jsonl_layouts_of_a_20k_file_pack_agree(synth_folder_pack, tmp_path):
    files = json_files(synth_folder_pack / "artifacts")
    assert len(files) >= 20000
    folder = Store.open(synth_folder_pack)
    jsonl = Store.open(_jsonl_copy(synth_folder_pack, tmp_path / "jsonl"))
    assert folder.paths.artifacts_path.is_dir() and jsonl.paths.artifacts_path.is_file()
    assert folder.query("SELECT count(*) FROM artifacts")[0][0] == len(files)
    assert dump_tables(folder) == dump_tables(jsonl)
    assert folder.digest == jsonl.digest
    # every artifact keeps its file as its source
    assert folder.query("SELECT count(*) FROM artifacts WHERE src_file LIKE '%.json' AND src_line IS NULL")[0][
        0
    ] == len(files)


def test_json_files_finds_what_rglob_finds(tmp_path):
    root = tmp_path / "artifacts"
    for rel in ("a/x.json", "a/b/y.json", "a-b/z.json", "top.json", ".json", "a/not.JSON", "a/n.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}")
    (root / "dir.json").mkdir()
    (root / "a" / "link.json").symlink_to(root / "top.json")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.json").write_text("{}")
    (root / "linked_dir").symlink_to(tmp_path / "outside")  # rglob does not enter symlinked folders
    expected = sorted(str(p) for p in root.rglob("*.json") if p.is_file())
    assert json_files(root) == expected


def _pack_with_artifact(tiny_pack: Path, dst: Path, name: str, data: bytes) -> Path:
    shutil.copytree(tiny_pack, dst)
    (dst / "artifacts" / "jira" / name).write_bytes(data)
    return dst


def test_an_artifact_file_that_is_not_utf8_is_located(tiny_pack, tmp_path):
    pack = _pack_with_artifact(tiny_pack, tmp_path / "p", "BAD-1.json", b'{"title": "caf\xe9"}')
    (pack / "artifacts" / "jira" / "BAD-2.json").write_bytes(b"\xff{}")
    with pytest.raises(ContractError) as err:
        Store.open(pack)
    probs = err.value.problems
    assert [Path(p.file).name for p in probs] == ["BAD-1.json", "BAD-2.json"]
    assert "not valid UTF-8 (byte 0xe9 at offset 14)" in probs[0].message
    assert "byte 0xff at offset 0" in probs[1].message


def test_odd_but_valid_artifact_texts_load_as_written(tiny_pack, tmp_path):
    """Pretty-printed, CRLF, BOM-free non-ASCII, escapes and separators survive the NDJSON hand-off."""
    text = '{\r\n  "title": "Zo\\u00eb \u2028 line\\nbreak \\"quoted\\" \U0001f600",\r\n  "body": "tab\\there"\r\n}\r\n'
    pack = _pack_with_artifact(tiny_pack, tmp_path / "p", "ODD-1.json", text.encode("utf-8"))
    s = Store.open(pack)
    raw, title = s.query("SELECT raw::VARCHAR, title FROM artifacts WHERE id = 'ODD-1'")[0]
    assert json.loads(raw) == json.loads(text)
    assert title == json.loads(text)["title"]


def test_malformed_artifact_file_keeps_its_located_error(tiny_pack, tmp_path):
    pack = _pack_with_artifact(tiny_pack, tmp_path / "p", "BAD-3.json", b'{"title": x}')
    (pack / "artifacts" / "jira" / "EMPTY-1.json").write_bytes(b"")
    with pytest.raises(ContractError) as err:
        Store.open(pack)
    found = {(Path(p.file).name, p.message) for p in err.value.problems}
    assert ("BAD-3.json", "malformed JSON") in found
    assert ("EMPTY-1.json", "malformed JSON") in found
    assert all(p.line is None for p in err.value.problems)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_artifact_file_is_an_os_error_naming_it(tiny_pack, tmp_path):
    pack = _pack_with_artifact(tiny_pack, tmp_path / "p", "LOCKED-1.json", b"{}")
    locked = pack / "artifacts" / "jira" / "LOCKED-1.json"
    locked.chmod(0)
    with pytest.raises(OSError) as err:
        Store.open(pack)
    assert err.value.filename == str(locked)


def test_the_fingerprint_stamped_while_reading_a_folder_is_the_sources_fingerprint(tiny_pack, tmp_path):
    """A folder load stamps each artifact file as it reads it: the same fingerprint as a walk
    of the files (so ``--db`` reuse and the verifier's check agree), changed by an artifact
    file's change and not by a file the loader does not read."""
    pack = tmp_path / "p"
    shutil.copytree(tiny_pack, pack)
    store = Store.open(pack)
    assert (pack / "artifacts").is_dir()
    stamped = store.query("SELECT value FROM meta WHERE key = 'fingerprint'")[0][0]
    assert stamped == fingerprint(store.paths) and store.sources_unchanged()
    (pack / "artifacts" / "NOTES.txt").write_text("not an artifact", encoding="utf-8")
    assert store.sources_unchanged()
    first = json_files(pack / "artifacts")[0]
    os.utime(first, ns=(0, 0))
    assert not store.sources_unchanged()


def _spools(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("groundeval-artifacts-*"))


def test_a_load_that_fails_on_its_events_leaves_no_spool_of_the_artifacts_read_ahead(tiny_pack, tmp_path, monkeypatch):
    """The artifact folder is read on a thread while the events are staged: when the events
    fail, that reading stops and its spool file is deleted (nothing left in the temp folder)."""
    spool_dir = tmp_path / "tmp"
    spool_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool_dir))
    pack = tmp_path / "p"
    shutil.copytree(tiny_pack, pack)
    for i in range(300):  # enough files that the reading is still going when the events fail
        (pack / "artifacts" / "jira" / f"MORE-{i}.json").write_text('{"title": "x"}', encoding="utf-8")
    events = next(pack.glob("*.jsonl"))
    events.unlink()
    events.mkdir()  # an events source that is a folder: refused before any artifact is staged
    with pytest.raises(ContractError, match="events source must be a file"):
        Store.open(pack)
    assert not any(t.name == "groundeval-artifacts" for t in threading.enumerate())  # joined, not left running
    assert _spools(spool_dir) == []


def test_an_artifact_file_error_read_ahead_is_raised_in_the_caller_with_nothing_left_behind(
    tiny_pack, tmp_path, monkeypatch
):
    spool_dir = tmp_path / "tmp"
    spool_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool_dir))
    pack = _pack_with_artifact(tiny_pack, tmp_path / "p", "BAD-1.json", b'{"title": "caf\xe9"}')
    with pytest.raises(ContractError) as err:
        Store.open(pack)
    assert [Path(p.file).name for p in err.value.problems] == ["BAD-1.json"]
    assert _spools(spool_dir) == []
    # and a good load deletes its spool once staged
    shutil.copytree(tiny_pack, tmp_path / "good")
    assert Store.open(tmp_path / "good").query("SELECT count(*) FROM artifacts")[0][0] > 0
    assert _spools(spool_dir) == []
