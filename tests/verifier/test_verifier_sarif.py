"""SARIF output against the official OASIS SARIF 2.1.0 schema (tests/verifier/sarif/), and what
code-scanning consumers need beyond the schema: a helpUri per rule into docs/verifier.md (an
anchor per rule code), a region on every result (manifest-level findings included), and every
location relative to a base named in run.originalUriBaseIds."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import jsonschema
import pytest
import test_verifier_rules as rules_cases
from verifier_drafts import ORIGINAL, REPO, TINY, PackDraft

from groundeval import verifier
from groundeval.verifier import output

SCHEMA_FILE = Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
DOCS = (REPO / "docs" / "verifier.md").read_text(encoding="utf-8")
# one case per kind of location: manifest YAML, sources, event lines, artifact files, references,
# semantics, and findings with no line or no file (generation statistics, caps)
CASE_IDS = ["GE101", "GE102", "GE105", "GE111", "GE113", "GE121", "GE123", "GE201", "GE205", "GE303", "GE409"]
CASES = {c[0]: c for c in rules_cases.CASES if c[0] in CASE_IDS}


@pytest.fixture(scope="module")
def validator():
    raw = SCHEMA_FILE.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256  # the official text, unedited (see sarif/README.md)
    schema = json.loads(raw)
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def _pack(tmp_path: Path, rule: str) -> tuple[Path, int]:
    _, level, trigger, _ = CASES[rule]
    draft = PackDraft(TINY)
    trigger(draft)
    return draft.write(tmp_path / rule), level


def _resolve(location: dict, bases: dict, cwd: Path) -> Path:
    """A location as a consumer resolves it: up the uriBaseId chain, SRCROOT being the working directory."""
    uri, base_id = location["uri"], location.get("uriBaseId")
    while base_id is not None:
        if base_id == "SRCROOT" and "uri" not in bases["SRCROOT"]:
            uri = urljoin(cwd.as_uri() + "/", uri)
            break
        base = bases[base_id]
        uri = urljoin(base["uri"], uri) if "uri" in base else uri
        base_id = base.get("uriBaseId")
    parsed = urlparse(uri)
    assert parsed.scheme == "file", uri
    return Path(unquote(parsed.path))


def check_log(text: str, validator, result, cwd: Path) -> dict:
    doc = json.loads(text)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["informationUri"] == output.docs_uri() and urlparse(driver["informationUri"]).scheme == "https"
    assert "groundeval.dev" not in text
    for rule in driver["rules"]:
        assert rule["helpUri"] == output.docs_uri(rule["id"]) and urlparse(rule["helpUri"]).scheme == "https"
        anchor = urlparse(rule["helpUri"]).fragment
        assert anchor == rule["id"].lower() and f'<a id="{anchor}"></a>' in DOCS  # the anchor exists
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", rule["name"])
    bases = run["originalUriBaseIds"]
    for name, base in bases.items():
        assert base.get("uriBaseId") in (None, *bases), name  # chains end in bases that exist
        if "uri" in base and "uriBaseId" not in base:
            assert urlparse(base["uri"]).scheme == "file" and base["uri"].endswith("/")
    assert len(run["results"]) == len(result.findings)
    for res, finding in zip(run["results"], result.findings):
        (loc,) = res["locations"]
        phys = loc["physicalLocation"]
        art = phys["artifactLocation"]
        assert art["uriBaseId"] in bases, art  # every location names its base
        assert not urlparse(art["uri"]).scheme and not art["uri"].startswith("/")
        file = Path(finding.file or result.manifest).resolve()
        assert _resolve(art, bases, cwd) == file  # and resolves to the finding's file
        region = phys["region"]  # every result has one, manifest-level findings included
        lines = file.read_text(encoding="utf-8").split("\n")
        if finding.line is not None:
            assert region["startLine"] == region["endLine"] == finding.line
            assert region["snippet"]["text"] == lines[finding.line - 1].rstrip("\r")
        elif "startLine" in region:
            assert region["startLine"] >= 1 and region["endLine"] <= len(lines)
    return doc


@pytest.mark.parametrize("rule", CASE_IDS)
def test_sarif_is_valid_for_a_pack_outside_the_working_directory(rule, tmp_path, monkeypatch, validator):
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)
    pack, level = _pack(tmp_path, rule)
    result = verifier.verify(pack, level=level)
    assert result.by_rule(rule)
    doc = check_log(output.render_sarif(result), validator, result, work)
    bases = doc["runs"][0]["originalUriBaseIds"]
    assert bases["PACKROOT"]["uri"] == pack.resolve().as_uri() + "/"  # not relative to an unrelated cwd


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["GE101", "GE205", "GE409"])
def test_sarif_under_the_working_directory_is_machine_independent(rule, tmp_path, monkeypatch, validator):
    monkeypatch.chdir(tmp_path)
    pack, level = _pack(tmp_path / "repo" / "packs", rule)
    monkeypatch.chdir(tmp_path / "repo")
    result = verifier.verify(Path("packs") / rule, level=level)
    text = output.render_sarif(result)
    doc = check_log(text, validator, result, tmp_path / "repo")
    bases = doc["runs"][0]["originalUriBaseIds"]
    assert list(bases) == ["SRCROOT"] and "uri" not in bases["SRCROOT"]  # code scanning supplies the checkout
    for res in doc["runs"][0]["results"]:  # repository-relative paths, as code scanning reads them
        art = res["locations"][0]["physicalLocation"]["artifactLocation"]
        assert art["uriBaseId"] == "SRCROOT" and art["uri"].startswith(f"packs/{rule}/")
    assert str(tmp_path) not in text and "file://" not in text
    assert text == output.render_sarif(verifier.verify(Path("packs") / rule, level=level))  # deterministic


def test_manifest_level_findings_get_a_region(tmp_path, monkeypatch, validator):
    """Generation statistics name no file; caps name the manifest but no line: both get the whole
    manifest as their region (the original-format pack at level 4 has both)."""
    monkeypatch.chdir(tmp_path)
    result = verifier.verify(ORIGINAL, level=4)
    lineless = [f for f in result.findings if f.line is None]
    assert any(f.file is None for f in lineless) and any(f.file for f in lineless)
    doc = check_log(output.render_sarif(result), validator, result, tmp_path)
    manifest_lines = Path(result.manifest).read_text(encoding="utf-8").rstrip("\n").split("\n")
    for res, f in zip(doc["runs"][0]["results"], result.findings):
        if f.line is None:
            region = res["locations"][0]["physicalLocation"]["region"]
            assert region == {
                "startLine": 1,
                "startColumn": 1,
                "endLine": len(manifest_lines),
                "endColumn": len(manifest_lines[-1]) + 1,
            }


def test_manifest_path_without_a_line_is_placed_on_its_line(tmp_path):
    manifest = tmp_path / "groundeval.yaml"
    manifest.write_text("name: x\nevaluation:\n  silence_pairs:\n    - name: a\n    - name: b\n", encoding="utf-8")
    assert output._manifest_line(str(manifest), "$.evaluation.silence_pairs[1]") == 5
    assert output._manifest_line(str(manifest), "$.evaluation") == 3
    assert output._manifest_line(str(manifest), None) is None


def test_every_rule_in_the_registry_has_a_docs_anchor():
    from groundeval.verifier.rules import load_all
    from groundeval.verifier.rules.registry import RULES

    load_all()
    import groundeval.verifier.drift  # noqa: F401  (registers the drift rules)

    missing = [r for r in sorted(RULES) if f'<a id="{r.lower()}"></a>' not in DOCS]
    assert missing == []
