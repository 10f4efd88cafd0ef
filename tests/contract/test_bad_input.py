"""Bad input: one clear message naming file, line and field; exit 2; no traceback; nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contract_cli import run_cli


def edit_line(path: Path, lineno: int, new: str) -> None:
    lines = path.read_text().splitlines()
    lines[lineno - 1] = new
    path.write_text("\n".join(lines) + "\n")


def event_line(pack: Path, lineno: int) -> dict:
    return json.loads((pack / "events.jsonl").read_text().splitlines()[lineno - 1])


@pytest.mark.parametrize(
    "lineno, mutate, expected",
    [
        (3, lambda r: '{"id": "e3", "type": ', "events.jsonl:3: malformed JSON line"),
        (
            2,
            lambda r: json.dumps({k: v for k, v in r.items() if k != "type"}),
            "events.jsonl:2 field 'type': missing required field",
        ),
        (
            4,
            lambda r: json.dumps({**r, "actors": "alice"}),
            "events.jsonl:4 field 'actors': expected a list of strings",
        ),
        (
            5,
            lambda r: json.dumps({**r, "timestamp": "yesterday"}),
            "events.jsonl:5 field 'timestamp': unparseable timestamp \"yesterday\"",
        ),
        (
            6,
            lambda r: json.dumps({**r, "id": 6.5}),
            "events.jsonl:6 field 'id': expected a string or an integer, got double",
        ),
        (
            7,
            lambda r: json.dumps({**r, "artifact_ids": {"ticket": 4.5}}),
            "events.jsonl:7 field 'artifact_ids': expected a mapping",
        ),
        (
            9,
            lambda r: json.dumps({**r, "id": "e1"}),
            "events.jsonl:9 field 'id': duplicate event id \"e1\" (first at line 1)",
        ),
    ],
)
def test_bad_event_lines(pack, capsys, lineno, mutate, expected):
    edit_line(pack / "events.jsonl", lineno, mutate(event_line(pack, lineno)))
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2
    assert expected in err
    assert "Traceback" not in err


def test_every_problem_is_reported_at_once(pack, capsys):
    edit_line(pack / "events.jsonl", 2, "not json")
    edit_line(pack / "events.jsonl", 8, json.dumps({**event_line(pack, 8), "facts": [1]}))
    (pack / "artifacts" / "slack" / "JIRA-42.json").write_text('{"timestamp": "2026-03-01T00:00:00Z"}')
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2
    assert "events.jsonl:2: malformed JSON line" in err
    assert "events.jsonl:8 field 'facts': expected a mapping" in err
    assert "field 'id': duplicate artifact id \"JIRA-42\"" in err


def test_bad_artifacts(pack, capsys):
    (pack / "artifacts" / "jira" / "JIRA-43.json").write_text('{"title": "x", "timestamp": "soon"}')
    (pack / "artifacts" / "zoom" / "broken.json").write_text('{"title": ')
    (pack / "artifacts" / "loose.json").write_text('{"title": "no subsystem", "date": "2026-03-01"}')
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2
    assert "JIRA-43.json field 'timestamp': unparseable timestamp \"soon\"" in err
    assert "broken.json: malformed JSON" in err
    assert "loose.json field 'subsystem': missing subsystem" in err


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            lambda t: t.replace("  seed: 7", "  seed: 7\n  sead: 8"),
            "field 'evaluation.sead': Extra inputs are not permitted",
        ),
        (lambda t: t.replace("max_per_actor: 5", "max_per_actor: lots"), "field 'evaluation.max_per_actor'"),
        (lambda t: t.replace("timezone: UTC", "timezone: Mars/Olympus"), "field 'timezone': unknown timezone"),
        (
            lambda t: t.replace("events: events.jsonl", "events: missing.jsonl"),
            "field 'sources.events': events source not found",
        ),
        (lambda t: t.replace("name: tiny", "name: [tiny"), "invalid YAML"),
    ],
)
def test_bad_manifest(pack, capsys, edit, expected):
    manifest = pack / "groundeval.yaml"
    manifest.write_text(edit(manifest.read_text()))
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2
    assert expected in err
    assert "groundeval.yaml" in err


def test_manifest_errors_name_the_yaml_line(pack, capsys):
    manifest = pack / "groundeval.yaml"
    text = manifest.read_text().replace("  max_per_event_type: 5", "  max_per_event_type: -1")
    manifest.write_text(text)
    lineno = text.splitlines().index("  max_per_event_type: -1") + 1
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2
    assert f"groundeval.yaml:{lineno} field 'evaluation.max_per_event_type'" in err


def test_missing_pack(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, err = run_cli(["info", str(tmp_path / "empty")], capsys)
    assert code == 2 and "no manifest found" in err


def test_failed_load_writes_no_database(pack, tmp_path, capsys):
    edit_line(pack / "events.jsonl", 1, "{")
    db = tmp_path / "out.duckdb"
    code, _ = run_cli(["info", str(pack), "--db", str(db)], capsys)
    assert code == 2
    assert not db.exists()
    assert not list(tmp_path.glob("out.duckdb*"))


def test_real_process_prints_no_traceback(pack):
    edit_line(pack / "events.jsonl", 1, "{")
    proc = subprocess.run(
        [sys.executable, "-m", "groundeval.cli.main", "info", str(pack)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "events.jsonl:1: malformed JSON line" in proc.stderr
    assert "Traceback" not in proc.stderr
