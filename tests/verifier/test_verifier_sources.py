"""Event and artifact sources in every supported layout, and unreadable ones."""

from __future__ import annotations

import csv
import json

import duckdb

from groundeval import verifier
from verifier_drafts import TINY, PackDraft


def test_unreadable_events_source(tmp_path):
    root = PackDraft(TINY).write(tmp_path / "p")
    (root / "events.parquet").write_bytes(b"PAR1 this is not parquet")
    text = (root / "groundeval.yaml").read_text().replace("events: events.jsonl", "events: events.parquet")
    (root / "groundeval.yaml").write_text(text)
    result = verifier.verify(root, level=2)
    assert result.by_rule("GE115")
    assert not result.by_rule("GE000")


def test_unreadable_artifacts_source(tmp_path):
    root = PackDraft(TINY).write(tmp_path / "p")
    (root / "arts.jsonl").write_bytes(b'{"id": "x", "title": "\xff\xfe broken"}\n')
    text = (root / "groundeval.yaml").read_text().replace("artifacts: artifacts", "artifacts: arts.jsonl")
    (root / "groundeval.yaml").write_text(text)
    result = verifier.verify(root, level=2)
    assert result.by_rule("GE125") or result.by_rule("GE121") or result.by_rule("GE120")
    assert not result.by_rule("GE000")


def test_csv_and_parquet_events_are_checked_per_row(tmp_path):
    d = PackDraft(TINY)
    d.event("e4")["timestamp"] = "later"
    root = d.write(tmp_path / "p")
    events = [json.loads(x) for x in (root / "events.jsonl").read_text().splitlines()]
    with open(root / "events.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "type", "timestamp", "actors", "artifact_ids", "facts"])
        for e in events:
            w.writerow(
                [
                    e["id"],
                    e["type"],
                    e["timestamp"],
                    json.dumps(e["actors"]),
                    json.dumps(e["artifact_ids"]),
                    json.dumps(e["facts"]),
                ]
            )
    manifest = (root / "groundeval.yaml").read_text()
    (root / "groundeval.yaml").write_text(manifest.replace("events: events.jsonl", "events: events.csv"))
    f = verifier.verify(root, level=2).by_rule("GE113")
    assert len(f) == 1 and f[0].line == 5 and f[0].file.endswith("events.csv")  # header is line 1

    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * FROM read_json_auto('{root / 'events.jsonl'}'))"
        f" TO '{root / 'events.parquet'}' (FORMAT parquet)"
    )
    (root / "groundeval.yaml").write_text(manifest.replace("events: events.jsonl", "events: events.parquet"))
    f = verifier.verify(root, level=2).by_rule("GE113")
    assert len(f) == 1 and f[0].line == 4  # parquet rows count from 1


def test_jsonl_artifacts_without_ids(tmp_path):
    d = PackDraft(TINY)
    root = d.write(tmp_path / "p")
    rows = [dict(v, id=k.split("/")[1][:-5], subsystem=k.split("/")[0]) for k, v in d.artifacts.items()]
    rows.append({"title": "anonymous", "timestamp": "2026-03-01T00:00:00Z"})
    (root / "arts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = (root / "groundeval.yaml").read_text().replace("artifacts: artifacts", "artifacts: arts.jsonl")
    (root / "groundeval.yaml").write_text(text)
    result = verifier.verify(root, level=2)
    f = result.by_rule("GE122")
    assert len(f) == 1 and f[0].line == len(rows)
    assert [x.rule for x in result.findings if x.severity != "info"] == ["GE122"]
