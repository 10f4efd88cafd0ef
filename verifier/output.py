"""Render a verification: rich table, JSON, SARIF 2.1.0 and JUnit XML.

File paths are shown relative to the working directory when they lie under it,
which is what code-scanning uploads and CI annotations expect.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.table import Table

from .model import SEVERITIES, SEVERITY_RANK, Finding, VerificationResult
from .rules.registry import RULES

FORMATS = ("table", "json", "sarif", "junit")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def display_path(path: str | None, base: Path | None = None) -> str | None:
    if not path:
        return path
    base = base or Path.cwd()
    try:
        return Path(path).resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def where(f: Finding) -> str:
    out = display_path(f.file) or "-"
    if f.line is not None:
        out += f":{f.line}"
    if f.record:
        out += f" [{f.record}]"
    if f.path:
        out += f" {f.path}"
    return out


def summary_line(result: VerificationResult) -> str:
    counts = ", ".join(f"{result.count(s)} {s}{'s' if result.count(s) != 1 else ''}" for s in SEVERITIES)
    return f"{result.pack}: level {result.level}, {counts}"


def render_table(result: VerificationResult, console: Console | None = None) -> None:
    console = console or Console()
    if result.findings:
        table = Table(show_lines=False, title_justify="left")
        table.add_column("severity")
        table.add_column("rule")
        table.add_column("where", overflow="fold")
        table.add_column("finding", overflow="fold")
        for f in result.findings:
            text = f.message + (f"\n[dim]fix: {f.hint}[/dim]" if f.hint and f.severity != "info" else "")
            table.add_row(f"[{_STYLE[f.severity]}]{f.severity}[/]", f.rule, where(f), text)
        console.print(table)
    style = "bold red" if result.count("error") else "yellow" if result.count("warning") else "green"
    console.print(f"[{style}]{summary_line(result)}[/]", highlight=False)


def _relativised(result: VerificationResult) -> dict[str, Any]:
    data = result.to_dict()
    for f in data["findings"]:
        f["file"] = display_path(f["file"])
    data["manifest"] = display_path(data["manifest"])
    return data


def render_json(result: VerificationResult) -> str:
    return json.dumps(_relativised(result), indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def render_sarif(result: VerificationResult) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        tool_version = version("groundeval")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        tool_version = "0"
    rule_ids = sorted(set(result.rules_run) | {f.rule for f in result.findings})
    index = {r: i for i, r in enumerate(rule_ids)}
    rules = []
    for rid in rule_ids:
        rule = RULES[rid]
        rules.append({
            "id": rid,
            "name": "".join(w.capitalize() for w in rule.title.replace("-", " ").split()),
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": rule.rationale},
            "help": {"text": rule.fix},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "properties": {"family": rule.family, "level": rule.level},
        })
    results = []
    for f in result.findings:
        loc: dict[str, Any] = {"artifactLocation": {"uri": display_path(f.file or result.manifest) or "."}}
        if f.line is not None and f.line >= 1:
            loc["region"] = {"startLine": f.line}
        props = {k: v for k, v in (("jsonPath", f.path), ("record", f.record), ("fix", f.hint)) if v}
        results.append({
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": loc}],
            "properties": props,
        })
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "groundeval-verify", "version": tool_version,
                                "informationUri": "https://groundeval.dev/docs/verifier", "rules": rules}},
            "results": results,
            "properties": {"pack": result.pack, "level": result.level},
        }],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_junit(result: VerificationResult, fail_on: str = "error") -> str:
    """One test case per rule; a rule fails when it has findings at or above ``fail_on``."""
    threshold = SEVERITY_RANK[fail_on]
    ran = set(result.rules_run)
    rule_ids = sorted(ran | {f.rule for f in result.findings})
    by_rule: dict[str, list[Finding]] = {r: [] for r in rule_ids}
    for f in result.findings:
        by_rule[f.rule].append(f)
    suite = ET.Element("testsuite", name=f"groundeval verify {result.pack}")
    failures = skipped = 0
    for rid in rule_ids:
        rule = RULES[rid]
        case = ET.SubElement(suite, "testcase", classname=f"verifier.{rule.family}", name=f"{rid} {rule.title}")
        bad = [f for f in by_rule[rid] if SEVERITY_RANK[f.severity] >= threshold]
        if bad:
            failures += 1
            fail = ET.SubElement(case, "failure", message=f"{len(bad)} finding(s)", type=bad[0].severity)
            fail.text = "\n".join(f"{where(f)}: {f.message}" for f in bad) + f"\nfix: {rule.fix}"
        elif rid not in ran:
            skipped += 1
            ET.SubElement(case, "skipped", message="not run at this level or input")
        rest = [f for f in by_rule[rid] if f not in bad]
        if rest:
            ET.SubElement(case, "system-out").text = "\n".join(f"{f.severity} {where(f)}: {f.message}" for f in rest)
    suite.set("tests", str(len(rule_ids)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites", name="groundeval verify", tests=str(len(rule_ids)), failures=str(failures))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render(result: VerificationResult, fmt: str, fail_on: str = "error") -> str:
    """Text of a non-table format."""
    if fmt == "json":
        return render_json(result)
    if fmt == "sarif":
        return render_sarif(result)
    if fmt == "junit":
        return render_junit(result, fail_on)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def write(text: str, out: str | os.PathLike) -> None:
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
