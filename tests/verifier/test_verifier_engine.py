"""The engine: one pass over everything, no exceptions, bundled packs clean, same store as the loader."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from groundeval import verifier
from verifier_drafts import REPO, TINY, PackDraft
from groundeval.errors import ContractError, Problem
from groundeval.store import ingest
from groundeval.store.store import Store
from groundeval.verifier import engine
from groundeval.verifier.rules.registry import CHECKS

BUNDLED = sorted(
    p.parent for p in (REPO / "domain_packs").glob("*/groundeval.yaml") if not p.parent.name.startswith(("_", "."))
)


@pytest.mark.parametrize("pack", BUNDLED, ids=[p.name for p in BUNDLED])
def test_bundled_packs_verify_clean(pack):
    result = verifier.verify(pack, level=4)
    loud = [str(f) for f in result.findings if f.severity != "info"]
    assert loud == []
    assert not result.by_rule("GE001") and not result.by_rule("GE405")


def test_store_matches_the_loader(tmp_path):
    result = verifier.verify(TINY, level=2)
    assert result.facts["digest"] == Store.open(TINY).digest
    assert result.facts["events"] == 9 and result.facts["event_types"]["incident_resolved"] == 2


def test_a_broken_file_hides_nothing(tmp_path):
    d = PackDraft(TINY)
    d.manifest["evaluation"]["seeed"] = 1  # manifest: schema error
    d.events.insert(1, "{oops")  # events: malformed line
    d.event("e9")["actors"].append("zed")  # events: undeclared actor (level 2)
    d.artifacts["jira/JIRA-43.json"]["title"] = 43  # artifacts: schema error
    d.event("e3")["artifact_ids"]["doc"] = "NOPE-1"  # events: dangling reference (level 2)
    result = verifier.verify(d.write(tmp_path / "p"), level=2)
    rules = {f.rule for f in result.findings}
    assert {"GE102", "GE111", "GE120"} <= rules
    # The manifest is invalid, so manifest-dependent rules are skipped, the rest still run.
    assert "GE205" in rules and "GE001" in rules
    malformed = result.by_rule("GE111")[0]
    assert malformed.line == 2 and malformed.file.endswith("events.jsonl")


def test_manifest_findings_have_lines_and_paths(tmp_path):
    d = PackDraft(TINY)
    d.manifest["access"]["roles"]["engineer"]["subsystems"].append(7)
    root = d.write(tmp_path / "p")
    result = verifier.verify(root, level=1)
    f = result.by_rule("GE102")[0]
    text = (root / "groundeval.yaml").read_text().splitlines()
    assert f.path.startswith("$.access.roles.engineer.subsystems")
    assert f.line is not None and "7" in text[f.line - 1]


def test_valid_records_still_load_when_others_are_broken(tmp_path):
    d = PackDraft(TINY)
    d.event("e2")["timestamp"] = "not a time"
    result = verifier.verify(d.write(tmp_path / "p"), level=2)
    assert result.by_rule("GE113") and result.facts["events"] == 8


def test_no_pack_is_unusable_input(tmp_path):
    with pytest.raises(ContractError):
        verifier.verify(tmp_path / "missing")
    with pytest.raises(ContractError):
        verifier.verify(tmp_path)


def test_a_crashing_check_becomes_a_finding(monkeypatch, tmp_path):
    def boom(ctx):
        raise RuntimeError("kaboom")
        yield  # pragma: no cover

    checks = [type(c)(c.name, c.level, c.rules, c.needs, boom) if c.name == "empty_roles" else c for c in CHECKS]
    monkeypatch.setattr(engine, "CHECKS", checks)
    result = verifier.verify(TINY, level=3)
    assert any("kaboom" in f.message for f in result.by_rule("GE000"))
    assert "GE307" in result.rules_run  # the other checks still ran


def test_loader_rejections_are_reported(monkeypatch, tmp_path):
    real = ingest.validate_events
    calls = []

    def strict(con):
        calls.append(1)
        row = con.execute("SELECT file, line FROM ev_stage ORDER BY file, line LIMIT 1").fetchone()
        problems = real(con)
        if len(calls) == 1:
            problems.append(Problem(file=row[0], line=row[1], field="id", message="rejected for the test"))
        return problems

    monkeypatch.setattr(ingest, "validate_events", strict)
    result = verifier.verify(TINY, level=2, lenient=True)  # the lenient loader's own build
    assert [f.message for f in result.by_rule("GE119")] == ["rejected for the test"]
    assert result.facts["events"] == 8


def test_skipped_checks_are_announced(tmp_path):
    d = PackDraft(TINY)
    d.manifest["evaluation"]["seeed"] = 1
    result = verifier.verify(d.write(tmp_path / "p"), level=3)
    skipped = result.by_rule("GE001")
    assert skipped and "manifest" in skipped[0].message


def test_output_is_independent_of_hash_seed(tmp_path):
    d = PackDraft(TINY)
    d.event("e3")["actors"] += ["zed", "yan"]
    d.manifest["access"]["roles"]["auditor"] = {}
    root = d.write(tmp_path / "p")
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run(
            [sys.executable, "-m", "groundeval.cli.main", "verify", str(root), "--format", "json", "--level", "3"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        outs.add(proc.stdout)
    assert len(outs) == 1
    data = json.loads(outs.pop())
    assert [f["rule"] for f in data["findings"]].count("GE201") == 2
