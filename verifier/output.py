"""Render a verification: rich table, JSON, SARIF 2.1.0 and JUnit XML.

File paths are shown relative to the working directory when they lie under it,
which is what code-scanning uploads and CI annotations expect.

SARIF (checked against the OASIS 2.1.0 schema in the tests): every rule has a
``helpUri`` into ``docs/verifier.md`` (one anchor per rule code); every location names
its file relative to a base in ``run.originalUriBaseIds`` — ``SRCROOT``, the working
directory, for files under it (the repository-relative paths code scanning expects; the
log then does not depend on the machine), else ``PACKROOT``, the pack's folder as an
absolute URI; every result has a region, a whole file for findings about the manifest or
a file as a whole.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote
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
    # one line, whatever the path's length: CI logs are grepped for it
    console.print(f"[{style}]{summary_line(result)}[/]", highlight=False, soft_wrap=True)


def _relativised(result: VerificationResult) -> dict[str, Any]:
    data = result.to_dict()
    for f in data["findings"]:
        f["file"] = display_path(f["file"])
    data["manifest"] = display_path(data["manifest"])
    return data


def render_json(result: VerificationResult) -> str:
    return json.dumps(_relativised(result), indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"


# Where the project lives comes from its package metadata (``[project.urls]`` in
# pyproject.toml: Repository, Source or Homepage); a source tree whose installed metadata
# predates those URLs reads them from its pyproject.toml.
DOCS_PATH = "blob/main/docs/verifier.md"
_URL_LABELS = ("repository", "source", "source code", "homepage")


def _metadata_urls() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata("groundeval").get_all("Project-URL") or []
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        entries = []
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        urls[label.strip().lower()] = url.strip()
    return urls


def _pyproject_urls() -> dict[str, str]:
    import tomllib

    path = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {}).get("urls", {})
    except (OSError, ValueError):
        return {}
    return {str(k).lower(): str(v) for k, v in table.items()} if isinstance(table, dict) else {}


def repository_url() -> str:
    """The project's repository URL (https), from its package metadata."""
    for urls in (_metadata_urls(), _pyproject_urls()):
        for label in _URL_LABELS:
            url = urls.get(label, "").rstrip("/")
            if url.startswith("https://"):
                return url
    raise RuntimeError("groundeval's package metadata names no https repository URL ([project.urls])")


def docs_uri(rule_id: str | None = None) -> str:
    """Where docs/verifier.md documents ``rule_id`` (its anchor is the lower-case rule code)."""
    base = f"{repository_url()}/{DOCS_PATH}"
    return base if rule_id is None else f"{base}#{rule_id.lower()}"


MAX_SNIPPET_CHARS = 1000


def _lines(path: str) -> tuple[str, ...] | None:
    """The lines of a text file (without their line ends), or None when it is not a readable file."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None
    return tuple(line.rstrip("\r") for line in text.split("\n"))


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2  # SARIF's default column kind


def _region(path: Path | None, line: int | None, read: dict[str, Any]) -> dict[str, Any] | None:
    """The finding's line, start to end (with its text); the whole file when it names no line.
    ``read``: the files read so far in this rendering, by resolved path."""
    lines = None
    if path is not None and path.is_file():
        key = str(path.resolve())
        if key not in read:
            read[key] = _lines(key)
        lines = read[key]
    if line is not None and line >= 1:
        if lines is None or line > len(lines):
            return {"startLine": line}
        text = lines[line - 1]
        region: dict[str, Any] = {"startLine": line, "startColumn": 1, "endLine": line, "endColumn": _units(text) + 1}
        if len(text) <= MAX_SNIPPET_CHARS:
            region["snippet"] = {"text": text}
        return region
    if lines is None:
        return None
    lengths = tuple(_units(t) for t in lines)
    while len(lengths) > 1 and lengths[-1] == 0:  # a trailing newline ends the last line
        lengths = lengths[:-1]
    if lengths == (0,):
        return {"charOffset": 0, "charLength": 0}
    return {"startLine": 1, "startColumn": 1, "endLine": len(lengths), "endColumn": lengths[-1] + 1}


_PATH_PART = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def _manifest_line(manifest: str | None, json_path: str | None) -> int | None:
    """The manifest line a JSON path (``$.evaluation.silence_pairs[0]``) names, when it parses."""
    if not manifest or not json_path or not json_path.startswith("$"):
        return None
    import yaml

    from groundeval.contract.manifest import yaml_line

    loc = tuple(int(i) if i else k for k, i in _PATH_PART.findall(json_path[1:]))
    try:
        node = yaml.compose(Path(manifest).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, ValueError, yaml.YAMLError):
        return None
    return yaml_line(node, loc) if loc else None


def _under(path: Path, base: Path) -> str | None:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return None


class _Bases:
    """``run.originalUriBaseIds`` and each file's location relative to one of them: ``SRCROOT``
    (the working directory, whose absolute URI the consumer supplies — the checkout in code
    scanning, which reads such paths as repository-relative) for files under it, else
    ``PACKROOT`` (the pack's folder, as an absolute ``file://`` URI)."""

    def __init__(self, result: VerificationResult):
        manifest = Path(result.manifest) if result.manifest else None
        root = manifest.parent if manifest is not None else Path(result.pack)
        if root.is_file():
            root = root.parent
        self.root = root.resolve()
        self.cwd = Path.cwd().resolve()
        self.used: set[str] = set()

    def location(self, file: str) -> dict[str, Any]:
        path = Path(file).resolve()
        for base_id, base in (("SRCROOT", self.cwd), ("PACKROOT", self.root)):
            rel = _under(path, base)
            if rel is not None:
                self.used.add(base_id)
                return {"uri": quote("" if rel == "." else rel), "uriBaseId": base_id}
        self.used.add("FSROOT")
        return {"uri": quote(path.as_posix().lstrip("/")), "uriBaseId": "FSROOT"}

    def original(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "SRCROOT" in self.used:
            out["SRCROOT"] = {
                "description": {
                    "text": "The directory groundeval verify ran in (the repository root "
                    "in CI); a consumer supplies its absolute URI."
                }
            }
        if "PACKROOT" in self.used:
            out["PACKROOT"] = {
                "uri": self.root.as_uri() + "/",
                "description": {"text": "The folder of the verified pack (outside the working directory)."},
            }
        if "FSROOT" in self.used:
            out["FSROOT"] = {"uri": Path(self.root.anchor).as_uri(), "description": {"text": "The file system root."}}
        return out


def _pascal(title: str) -> str:
    """A rule's friendly name: one Pascal-case identifier ('duplicate event id' -> DuplicateEventId)."""
    words = [w for w in re.sub(r"[^A-Za-z0-9]+", " ", title).split() if w.lower() not in ("a", "an", "the")]
    return "".join(w[:1].upper() + w[1:].lower() for w in words)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


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
        rules.append(
            {
                "id": rid,
                "name": _pascal(rule.title),
                "shortDescription": {"text": _sentence(rule.title[:1].upper() + rule.title[1:])},
                "fullDescription": {"text": _sentence(rule.rationale)},
                "help": {"text": _sentence(rule.fix)},
                "helpUri": docs_uri(rid),
                "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
                "properties": {"family": rule.family, "level": rule.level},
            }
        )
    bases = _Bases(result)
    read: dict[str, Any] = {}
    results = []
    for f in result.findings:
        file = f.file or result.manifest
        loc: dict[str, Any] = {}
        if file:
            loc["artifactLocation"] = bases.location(file)
            line = f.line
            if line is None and result.manifest and Path(file).resolve() == Path(result.manifest).resolve():
                line = _manifest_line(result.manifest, f.path)
            region = _region(Path(file), line, read)
            if region is not None:
                loc["region"] = region
        else:
            loc["artifactLocation"] = bases.location(str(bases.root))
        props = {k: v for k, v in (("jsonPath", f.path), ("record", f.record), ("fix", f.hint)) if v}
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": _SARIF_LEVEL[f.severity],
                "message": {"text": _sentence(f.message)},
                "locations": [{"physicalLocation": loc}],
                "properties": props,
            }
        )
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "groundeval-verify",
                        "version": tool_version,
                        "informationUri": docs_uri(),
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": bases.original(),
                "results": results,
                "columnKind": "utf16CodeUnits",
                "properties": {"pack": result.pack, "level": result.level},
            }
        ],
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
