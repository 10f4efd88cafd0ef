"""Loading packs into the DuckDB store: formats, equivalence, order independence, --db reuse."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.store.store import Store

ORIGINAL = Path(__file__).resolve().parent.parent / "contract" / "packs" / "original"

# Every table a load produces, with the columns that describe where a record came from
# (file/line) left out: those legitimately differ between layouts.
TABLES = {
    "events": "id, type, epoch_us(ts), raw::VARCHAR",
    "event_actors": "*",
    "event_artifacts": "*",
    "artifacts": "id, subsystem, epoch_us(created), title, actors, restricted",
    "artifact_text": "*",
    "artifact_visibility": "*",
    "actors": "*",
    "actor_roles": "actor, role, epoch_us(since), epoch_us(until)",
    "roles": "*",
    "grants": "role, subsystem, epoch_us(since), epoch_us(until)",
    "broadcasts": "*",
}


def dump_tables(store: Store) -> dict[str, list[tuple]]:
    return {t: store.query(f"SELECT {cols} FROM {t} ORDER BY ALL") for t, cols in TABLES.items()}


def native_copy_of_original(dst: Path) -> Path:
    """The original pack's data in the native layout: groundeval.yaml + one artifacts JSONL."""
    cfg = yaml.safe_load((ORIGINAL / "config.yaml").read_text())
    manifest = {
        "name": "original",
        "sources": {"events": "events.jsonl", "artifacts": "corpus.jsonl"},
        "access": {"actors": cfg["actors"], "roles": cfg["roles"]},
        "evaluation": {
            k: cfg[k]
            for k in (
                "causal_links",
                "silence_pairs",
                "perspective",
                "perspective_actors",
                "easy_ratio",
                "medium_ratio",
                "hard_ratio",
                "max_perspective_questions",
                "max_counterfactual_questions",
                "max_silence_questions",
                "seed",
            )
        },
        "adapters": {k: cfg[k] for k in ("provider", "model", "api_key_env", "temperature", "max_tokens")},
    }
    for link in manifest["evaluation"]["causal_links"]:
        link["templates_as_happened"] = True  # what an original config.yaml's templates mean (contract/legacy.py)
    dst.mkdir(parents=True)
    (dst / "groundeval.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    shutil.copy(ORIGINAL / "events.jsonl", dst / "events.jsonl")
    lines = []
    for f in sorted((ORIGINAL / "artifacts").rglob("*.json")):
        rec = json.loads(f.read_text())
        rec = {"id": rec.pop("id", f.stem), "subsystem": rec.pop("subsystem", f.parent.name), **rec}
        lines.append(json.dumps(rec))
    (dst / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    return dst


def test_original_format_loads_unchanged_and_matches_native(tmp_path):
    original = Store.open(ORIGINAL)
    assert original.paths.legacy
    native = Store.open(native_copy_of_original(tmp_path / "native"))
    assert not native.paths.legacy
    assert dump_tables(original) == dump_tables(native)
    assert original.digest == native.digest
    m = original.manifest
    assert m.evaluation.seed == 11
    assert m.evaluation.causal_links[0].join[0].cause == "facts.incident_id"
    assert m.evaluation.silence_pairs[0].join[0].trigger == "facts.incident_id"
    assert m.adapters.model == "gpt-4o-mini"


def test_original_pack_tables_have_real_types_and_references():
    s = Store.open(ORIGINAL)
    # naive timestamps take the pack timezone (UTC here)
    assert s.query("SELECT epoch_us(ts) FROM events WHERE id = 'ev-1'")[0][0] == 1777622400000000
    refs = s.query("SELECT key, artifact_id FROM event_artifacts WHERE event_id = 'ev-3' ORDER BY key, pos")
    assert refs == [("thread", "slack-7"), ("ticket", "jira-7")]
    # id from the field beats the file stem; subsystem from the field beats the folder
    assert s.query("SELECT id, subsystem FROM artifacts WHERE src_file LIKE '%thread.json'") == [("slack-7", "slack")]
    # created_at and date are creation-time aliases
    assert s.query("SELECT count(*) FROM artifacts WHERE created IS NULL")[0][0] == 0
    assert s.query("SELECT principal FROM artifact_visibility WHERE artifact_id = 'slack-7'") == [("sre",)]


def test_timezone_applies_to_naive_times_only(tmp_path):
    dst = native_copy_of_original(tmp_path / "p")
    m = yaml.safe_load((dst / "groundeval.yaml").read_text())
    m["timezone"] = "America/New_York"
    (dst / "groundeval.yaml").write_text(yaml.safe_dump(m))
    with open(dst / "events.jsonl", "a") as fh:
        fh.write(json.dumps({"id": "ev-z", "type": "x", "timestamp": "2026-05-01T08:00:00Z"}) + "\n")
    s = Store.open(dst)
    naive, aware = (s.query("SELECT epoch_us(ts) FROM events WHERE id = ?", [i])[0][0] for i in ("ev-1", "ev-z"))
    assert naive - aware == 4 * 3600 * 1_000_000  # EDT is UTC-4 in May


def _write_tiny_variant(src: Path, dst: Path, event_order: list[int], artifact_order: list[int]) -> None:
    """The tiny pack with events and artifacts (as one JSONL) written in the given orders."""
    shutil.copytree(src, dst)
    events = (src / "events.jsonl").read_text().splitlines()
    (dst / "events.jsonl").write_text("\n".join(events[i] for i in event_order) + "\n")
    arts = []
    for f in sorted((src / "artifacts").rglob("*.json")):
        rec = json.loads(f.read_text())
        arts.append(json.dumps({"id": f.stem, "subsystem": f.parent.name, **rec}))
    shutil.rmtree(dst / "artifacts")
    (dst / "corpus.jsonl").write_text("\n".join(arts[i] for i in artifact_order) + "\n")
    text = (dst / "groundeval.yaml").read_text().replace("artifacts: artifacts ", "artifacts: corpus.jsonl ")
    (dst / "groundeval.yaml").write_text(text)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ev=st.permutations(range(9)), art=st.permutations(range(11)))
def test_digest_and_tables_independent_of_record_order(tmp_path_factory, tiny_pack, ev, art):
    assert len(list((tiny_pack / "artifacts").rglob("*.json"))) == len(art)
    base = tmp_path_factory.mktemp("base")
    shuffled = tmp_path_factory.mktemp("shuffled")
    _write_tiny_variant(tiny_pack, base / "p", list(range(9)), list(range(11)))
    _write_tiny_variant(tiny_pack, shuffled / "p", list(ev), list(art))
    a, b = Store.open(base / "p"), Store.open(shuffled / "p")
    assert a.digest == b.digest
    assert dump_tables(a) == dump_tables(b)
    # the folder layout of the same corpus has the same digest too
    assert Store.open(tiny_pack).digest == a.digest


def test_digest_changes_with_content(tmp_path, tiny_pack):
    shutil.copytree(tiny_pack, tmp_path / "p")
    before = Store.open(tmp_path / "p").digest
    f = tmp_path / "p" / "artifacts" / "jira" / "JIRA-43.json"
    f.write_text(f.read_text().replace("4s", "5s"))
    assert Store.open(tmp_path / "p").digest != before


def test_parquet_and_csv_events(tmp_path, tiny_pack):
    ref = Store.open(tiny_pack)
    con = duckdb.connect()
    for fmt in ("parquet", "csv"):
        dst = tmp_path / fmt
        shutil.copytree(tiny_pack, dst)
        src = str(tiny_pack / "events.jsonl")
        if fmt == "parquet":
            con.execute(f"COPY (SELECT * FROM read_json(?)) TO '{dst / 'events.parquet'}' (FORMAT parquet)", [src])
        else:
            con.execute(
                f"COPY (SELECT id, type, timestamp, array_to_string(actors, ';') AS actors,"
                f" to_json(artifact_ids)::VARCHAR AS artifact_ids, to_json(facts)::VARCHAR AS facts"
                f" FROM read_json(?, columns={{id: 'VARCHAR', type: 'VARCHAR', timestamp: 'VARCHAR',"
                f" actors: 'VARCHAR[]', artifact_ids: 'JSON', facts: 'JSON'}}))"
                f" TO '{dst / 'events.csv'}' (HEADER)",
                [src],
            )
        (dst / "events.jsonl").unlink()
        text = (dst / "groundeval.yaml").read_text().replace("events: events.jsonl", f"events: events.{fmt}")
        (dst / "groundeval.yaml").write_text(text)
        s = Store.open(dst)
        for t in ("event_actors", "event_artifacts"):
            assert s.query(f"SELECT * FROM {t} ORDER BY ALL") == ref.query(f"SELECT * FROM {t} ORDER BY ALL"), (fmt, t)
        assert s.query("SELECT id, type, epoch_us(ts) FROM events ORDER BY id") == ref.query(
            "SELECT id, type, epoch_us(ts) FROM events ORDER BY id"
        )
        assert s.query("SELECT json_extract_string(raw, '$.facts.incident_id') FROM events WHERE id = 'e4'") == [
            ("INC-42",)
        ]


def test_db_file_is_reused_and_refreshed(tmp_path, tiny_pack):
    shutil.copytree(tiny_pack, tmp_path / "p")
    db = tmp_path / "pack.duckdb"
    first = Store.open(tmp_path / "p", db=db)
    digest = first.digest
    first.close()
    assert db.exists() and not list(tmp_path.glob("*.tmp-*"))
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO meta VALUES ('marker', 'kept')")
    con.close()
    again = Store.open(tmp_path / "p", db=db)  # unchanged sources: reused without reloading
    assert again.query("SELECT value FROM meta WHERE key = 'marker'") == [("kept",)]
    assert again.digest == digest
    again.close()
    reopened = Store.open_db(db)
    assert reopened.manifest.name == "tiny" and reopened.digest == digest
    reopened.close()
    with open(tmp_path / "p" / "events.jsonl", "a") as fh:  # changed sources: reloaded
        fh.write(json.dumps({"id": "e10", "type": "x", "timestamp": "2026-03-09T00:00:00Z"}) + "\n")
    fresh = Store.open(tmp_path / "p", db=db)
    assert fresh.query("SELECT value FROM meta WHERE key = 'marker'") == []
    assert fresh.digest != digest
