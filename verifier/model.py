"""What the verifier reports: rules, findings and the result of one verification.

A rule is static metadata (id, family, level, default severity, rationale, fix hint);
a finding is one located occurrence. Results serialise to canonical JSON so a saved
verification can be diffed and fed back as a drift baseline.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"error": 2, "warning": 1, "info": 0}
LEVELS = {1: "shape", 2: "references", 3: "semantics", 4: "dryrun"}


@dataclass(frozen=True)
class Rule:
    id: str
    family: str
    level: int
    severity: str
    title: str
    rationale: str
    fix: str


@dataclass(frozen=True)
class Finding:
    """One located problem. ``path`` is a JSON path into the file (``$.access.roles.x``)."""

    rule: str
    severity: str
    message: str
    file: str | None = None
    line: int | None = None
    record: str | None = None
    path: str | None = None
    hint: str | None = None

    def sort_key(self) -> tuple:
        return (
            -SEVERITY_RANK[self.severity],
            self.rule,
            self.file or "",
            self.line or 0,
            self.record or "",
            self.path or "",
            self.message,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class VerificationResult:
    """All findings of one run plus the facts a drift baseline compares."""

    pack: str
    level: int
    findings: list[Finding] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    rules_run: list[str] = field(default_factory=list)
    manifest: str | None = None
    # Not serialised: the level 4 question set, and whether the caller's store was used.
    questions: Any = field(default=None, repr=False, compare=False)
    shared_store: bool = field(default=False, compare=False)

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def failed(self, fail_on: str = "error") -> bool:
        threshold = SEVERITY_RANK[fail_on]
        return any(SEVERITY_RANK[f.severity] >= threshold for f in self.findings)

    def by_rule(self, rule_id: str) -> list[Finding]:
        return [f for f in self.findings if f.rule == rule_id]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "manifest": self.manifest,
            "level": self.level,
            "summary": {s: self.count(s) for s in SEVERITIES},
            "findings": [f.to_dict() for f in self.findings],
            "facts": self.facts,
            "stats": self.stats,
            "rules_run": list(self.rules_run),
        }
