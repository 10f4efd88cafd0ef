"""Report formats and the CLI's exit codes."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import pytest

from groundeval import verifier
from verifier_drafts import TINY, PackDraft
from groundeval.cli.main import main
from groundeval.verifier import output
from groundeval.verifier.rules.registry import RULES


def _run(args) -> int:
    try:
        main(args)
    except SystemExit as exc:
        return exc.code or 0
    return 0


@pytest.fixture
def flawed(tmp_path):
    d = PackDraft(TINY)
    d.event("e3")["actors"].append("zed")  # warning GE201
    d.event("e9")["artifact_ids"]["file"] = "HR-404"  # error GE205
    return d.write(tmp_path / "flawed")


def test_sarif_structure(flawed):
    doc = json.loads(output.render_sarif(verifier.verify(flawed, level=2)))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(r["id"] for r in rules)
    by_id = {r["id"]: r for r in rules}
    levels = {}
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] and loc["region"]["startLine"] >= 1
        levels[res["ruleId"]] = res["level"]
    assert levels == {"GE201": "warning", "GE205": "error"}
    assert by_id["GE205"]["help"]["text"] == RULES["GE205"].fix


def test_junit_counts_failures_by_threshold(flawed):
    result = verifier.verify(flawed, level=2)
    for fail_on, failing in (("error", {"GE205"}), ("warning", {"GE201", "GE205"})):
        root = ET.fromstring(output.render_junit(result, fail_on))
        suite = root.find("testsuite")
        failed = {c.get("name").split()[0] for c in suite.iter("testcase") if c.find("failure") is not None}
        assert failed == failing and suite.get("failures") == str(len(failing))
        assert int(suite.get("tests")) == len(result.rules_run)


def test_json_is_canonical_and_stable(flawed):
    a = output.render_json(verifier.verify(flawed, level=3))
    b = output.render_json(verifier.verify(flawed, level=3))
    assert a == b and a.endswith("\n")
    data = json.loads(a)
    assert data["summary"] == {"error": 1, "warning": 1, "info": 0}
    assert json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n" == a


def test_exit_codes(flawed, tmp_path, capsys):
    assert _run(["verify", str(TINY)]) == 0
    assert _run(["verify", str(flawed), "--level", "2"]) == 1
    d = PackDraft(TINY)
    d.event("e3")["actors"].append("zed")
    warn_only = d.write(tmp_path / "warn")
    assert _run(["verify", str(warn_only), "--level", "2"]) == 0
    assert _run(["verify", str(warn_only), "--level", "2", "--fail-on", "warning"]) == 1
    assert _run(["verify", str(tmp_path / "nope")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run(["verify", str(empty)]) == 2
    assert "no manifest found" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["table", "json", "sarif", "junit"])
def test_out_file_for_every_format(flawed, tmp_path, fmt):
    out = tmp_path / f"report.{fmt}"
    assert _run(["verify", str(flawed), "--level", "2", "--format", fmt, "--out", str(out)]) == 1
    text = out.read_text()
    assert "GE205" in text
    if fmt in ("json", "sarif"):
        json.loads(text)
    if fmt == "junit":
        ET.fromstring(text)
