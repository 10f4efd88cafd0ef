"""The rule registry: rule metadata by id and the check functions that emit findings.

A check function receives the :class:`verifier.context.PackContext` and yields
findings built with :func:`finding`, which fills severity and fix hint from the
rule so every finding of a rule reads the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from ..model import Finding, Rule

RULES: dict[str, Rule] = {}


@dataclass(frozen=True)
class Check:
    name: str
    level: int
    rules: tuple[str, ...]
    needs: tuple[str, ...]
    fn: Callable[..., Iterable[Finding]]


CHECKS: list[Check] = []


def define(id: str, family: str, level: int, severity: str, title: str, rationale: str, fix: str) -> Rule:
    if id in RULES:
        raise ValueError(f"rule {id} defined twice")
    rule = Rule(id, family, level, severity, title, rationale, fix)
    RULES[id] = rule
    return rule


def check(*rule_ids: str, needs: tuple[str, ...] = ()) -> Callable:
    """Register a check emitting ``rule_ids``; ``needs`` names context parts it requires
    (``manifest``, ``store``, ``graph``) — when one is missing the check is skipped."""

    def wrap(fn: Callable[..., Iterable[Finding]]) -> Callable[..., Iterable[Finding]]:
        level = max(RULES[r].level for r in rule_ids)
        CHECKS.append(Check(fn.__name__, level, tuple(rule_ids), tuple(needs), fn))
        return fn

    return wrap


def finding(
    rule_id: str,
    message: str,
    *,
    severity: str | None = None,
    file=None,
    line: int | None = None,
    record: str | None = None,
    path: str | None = None,
) -> Finding:
    rule = RULES[rule_id]
    return Finding(
        rule=rule_id,
        severity=severity or rule.severity,
        message=message,
        file=None if file is None else str(file),
        line=line,
        record=record,
        path=path,
        hint=rule.fix,
    )
