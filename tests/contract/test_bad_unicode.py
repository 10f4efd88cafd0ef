"""Lone UTF-16 surrogate escapes (JSON ``"\\ud800"``): valid JSON grammar, not Unicode.

DuckDB refuses such records; the loader must still name file, line and field, exit 2,
and print no traceback. A proper surrogate pair (an emoji) is ordinary text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract_cli import run_cli
from groundeval.cli.main import main

LONE = "\ud800"


def edit_event(pack: Path, lineno: int, mutate) -> None:
    path = pack / "events.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[lineno - 1])
    mutate(record)
    lines[lineno - 1] = json.dumps(record)  # ensure_ascii writes the surrogate as the escape \ud800
    path.write_text("\n".join(lines) + "\n")


def edit_artifact(pack: Path, rel: str, mutate) -> None:
    path = pack / "artifacts" / rel
    record = json.loads(path.read_text())
    mutate(record)
    path.write_text(json.dumps(record))


@pytest.mark.parametrize(
    "lineno, mutate, field",
    [
        (3, lambda r: r.update(timestamp=LONE), "timestamp"),
        (3, lambda r: r.update(timestamp="2026-03-02T15:00:00Z" + LONE), "timestamp"),
        (4, lambda r: r.update(id="e4" + LONE), "id"),
        (5, lambda r: r.update(type="x\udc00"), "type"),
        (3, lambda r: r["actors"].append("dave" + LONE), "actors[3]"),
        (3, lambda r: r["facts"].update(topic=LONE), "facts.topic"),
        (3, lambda r: r["artifact_ids"].update(transcript="zoom" + LONE), "artifact_ids.transcript"),
    ],
)
def test_event_with_lone_surrogate(pack, capsys, lineno, mutate, field):
    edit_event(pack, lineno, mutate)
    assert "\\ud" in (pack / "events.jsonl").read_text().splitlines()[lineno - 1]
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2
    assert f"events.jsonl:{lineno} field '{field}': not valid Unicode" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "key, value, field",
    [
        ("timestamp", LONE, "timestamp"),
        ("id", "JIRA-43" + LONE, "id"),
        ("title", "slow " + LONE, "title"),
    ],
)
def test_artifact_with_lone_surrogate(pack, capsys, key, value, field):
    edit_artifact(pack, "jira/JIRA-43.json", lambda r: r.update({key: value}))
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2
    assert f"JIRA-43.json field '{field}': not valid Unicode" in err
    assert "Traceback" not in err


def test_surrogate_key_prints(pack, capsys):
    edit_event(pack, 3, lambda r: r["facts"].update({"to" + LONE: "x"}))
    code, err = run_cli(["info", str(pack)], capsys)
    assert code == 2
    assert "events.jsonl:3 field 'facts.to\\ud800': not valid Unicode" in err


def test_surrogate_pair_is_text(pack, capsys):
    """Near miss: the escaped pair of an emoji is valid Unicode and loads."""
    edit_event(pack, 3, lambda r: r["facts"].update(topic="outage \U0001f600"))
    edit_artifact(pack, "jira/JIRA-43.json", lambda r: r.update(title="slow \U0001f600"))
    assert "\\ud83d\\ude00" in (pack / "events.jsonl").read_text()
    main(["info", str(pack)])  # returns normally: no SystemExit
    assert "error" not in capsys.readouterr().err
