"""Lone UTF-16 surrogates (JSON ``"\\ud800"``) in records: a located finding, never GE000.

Python's JSON parser accepts them, DuckDB holds them neither as JSON nor as a parameter.
"""

from __future__ import annotations

import pytest

from groundeval import verifier
from verifier_drafts import PackDraft

LONE = "\ud800"


def _errors(result) -> list[tuple[str, str | None, int | None, str | None]]:
    return [
        (f.rule, f.file.rsplit("/", 1)[-1] if f.file else None, f.line, f.path)
        for f in result.findings
        if f.severity == "error"
    ]


def test_event_timestamp(draft: PackDraft, tmp_path):
    draft.event("e3")["timestamp"] = LONE
    pack = draft.write(tmp_path / "p")
    assert '"timestamp": "\\ud800"' in (pack / "events.jsonl").read_text()
    result = verifier.verify(pack)
    assert _errors(result) == [("GE113", "events.jsonl", 3, "$.timestamp")]


def test_event_timestamp_level_one(draft: PackDraft, tmp_path):
    draft.event("e3")["timestamp"] = "2026-03-02T15:00:00Z" + LONE
    result = verifier.verify(draft.write(tmp_path / "p"), level=1)
    assert _errors(result) == [("GE113", "events.jsonl", 3, "$.timestamp")]


def test_artifact_creation_time(draft: PackDraft, tmp_path):
    draft.artifacts["jira/JIRA-42.json"]["timestamp"] = LONE
    errors = _errors(verifier.verify(draft.write(tmp_path / "p"), level=1))
    assert errors == [("GE123", "JIRA-42.json", None, "$.timestamp")]


@pytest.mark.parametrize(
    "mutate, line, path",
    [
        (lambda d: d.event("e4").update(id="e4" + LONE), 4, "$.id"),
        (lambda d: d.event("e3").update(type="x\udc00"), 3, "$.type"),
        (lambda d: d.event("e3")["actors"].append(LONE), 3, "$.actors[3]"),
        (lambda d: d.event("e3")["facts"].update(topic=LONE), 3, "$.facts.topic"),
    ],
)
def test_other_event_strings(draft: PackDraft, tmp_path, mutate, line, path):
    mutate(draft)
    result = verifier.verify(draft.write(tmp_path / "p"))
    assert not [f for f in result.findings if f.rule == "GE000"]
    assert ("GE119", "events.jsonl", line, path) in _errors(result)


def test_artifact_id(draft: PackDraft, tmp_path):
    draft.artifacts["jira/JIRA-42.json"]["id"] = "JIRA-42" + LONE
    result = verifier.verify(draft.write(tmp_path / "p"))
    assert not [f for f in result.findings if f.rule == "GE000"]
    assert ("GE119", "JIRA-42.json", None, "$.id") in _errors(result)


def test_surrogate_pair_is_clean(draft: PackDraft, tmp_path):
    """Near miss: an escaped pair (an emoji) is valid text."""
    draft.event("e3")["facts"]["topic"] = "outage \U0001f600"
    draft.artifacts["jira/JIRA-42.json"]["title"] = "slow \U0001f600"
    assert _errors(verifier.verify(draft.write(tmp_path / "p"))) == []
