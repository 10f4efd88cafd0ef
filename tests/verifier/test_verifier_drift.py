"""Drift against a saved verification, through the API and the CLI."""

from __future__ import annotations

import json

import pytest

from groundeval import verifier
from verifier_drafts import TINY, PackDraft
from groundeval.cli.main import main
from groundeval.errors import ContractError
from groundeval.verifier.drift import apply_baseline, compare, load_baseline


def _run(args) -> int:
    """Exit code of ``groundeval ARGS`` (0 when the command returns normally)."""
    try:
        main(args)
    except SystemExit as exc:
        return exc.code or 0
    return 0


def test_removed_and_changed_coverage(tmp_path):
    before = verifier.verify(TINY, level=3).facts
    d = PackDraft(TINY)
    d.manifest["evaluation"]["causal_links"].pop()
    d.manifest["access"]["roles"]["manager"]["subsystems"].remove("zoom")
    d.events = [e for e in d.events if e["type"] != "hr_case_opened"]
    d.events.append(dict(d.event("e3"), id="e10"))
    after = verifier.verify(d.write(tmp_path / "p"), level=3).facts
    drift = compare(before, after)
    removed = sorted(f.message for f in drift if f.rule == "GE501")
    assert removed == [
        "causal_links: 'resolution_triggers_postmortem' removed",
        "event_types: 'hr_case_opened' removed",
        "grants: 'manager:zoom' removed",
    ]
    changed = [f.message for f in drift if f.rule == "GE502"]
    assert "event_types: 'meeting_held' 1 -> 2" in changed and any(m.startswith("digest:") for m in changed)
    assert compare(before, before) == []


@pytest.mark.slow
def test_cli_baseline_round_trip(tmp_path, capsys):
    base = tmp_path / "baseline.json"
    assert _run(["verify", str(TINY), "--level", "3", "--save-baseline", str(base), "--format", "json"]) == 0
    assert load_baseline(base)["digest"]
    d = PackDraft(TINY)
    d.manifest["evaluation"]["silence_pairs"] = []
    root = d.write(tmp_path / "p")
    capsys.readouterr()
    code = _run(["verify", str(root), "--level", "3", "--baseline", str(base), "--format", "json"])
    assert code == 0  # drift alone does not fail without --fail-on-removed
    report = json.loads(capsys.readouterr().out)
    assert [f["message"] for f in report["findings"] if f["rule"] == "GE501"] == [
        "silence_pairs: 'postmortem_after_resolution' removed"
    ]
    assert _run(["verify", str(root), "--level", "3", "--baseline", str(base), "--fail-on-removed"]) == 1
    assert _run(["verify", str(TINY), "--level", "3", "--baseline", str(base), "--fail-on-removed"]) == 0


def test_bad_baseline_is_unusable_input(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ContractError):
        load_baseline(bad)
    assert _run(["verify", str(TINY), "--baseline", str(bad)]) == 2
    assert _run(["verify", str(TINY), "--baseline", str(tmp_path / "none.json")]) == 2


def test_apply_baseline_adds_findings():
    result = verifier.verify(TINY, level=2)
    facts = dict(result.facts, roles=result.facts["roles"] + ["ghost"])
    drift = apply_baseline(result, facts)
    assert [f.message for f in drift] == ["roles: 'ghost' removed"]
    assert result.by_rule("GE501") and "GE501" in result.rules_run
