"""Reading a task contract: YAML in, :class:`TaskContract` out, every problem located.

Each schema problem is reported with its file, line and field path (the YAML node's line),
all at once, as a :class:`~groundeval.errors.ContractError`; a regex that does not compile
is caught here, not when a run is scored.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import ContractError, Problem
from .model import TaskContract

__all__ = ["CONTRACT_NAMES", "dump_contract", "find_contract", "load_contract", "node_line", "parse_contract"]

CONTRACT_NAMES = ("task.yaml", "task.yml")
MAX_BYTES = 1_000_000


def _line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the node at ``loc`` (the deepest one that exists)."""
    best = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(key)), None)
            if nxt is None:
                break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
            node = node.value[key]
        else:
            break
        best = node.start_mark.line + 1
    return best


node_line = _line
"""The 1-based line of the YAML node at a validation error's location (for other readers of YAML)."""


def parse_contract(text: str, source: str = "<task>") -> TaskContract:
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise ContractError.single(source, f"a task contract is at most {MAX_BYTES} bytes")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ContractError.single(
            source,
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
            line=mark.line + 1 if mark is not None else None,
        ) from None
    if not isinstance(data, dict):
        raise ContractError.single(
            source, "a task contract is a YAML mapping (task, roles, tools, decisions, ...)", line=1
        )
    try:
        contract = TaskContract.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(x for x in err["loc"] if not (isinstance(x, str) and x.startswith(("function-", "model"))))
            field = ".".join(str(x) for x in loc) or None
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown key (see docs/tasks.md for the contract's keys)"
            problems.append(Problem(file=source, message=msg, line=_line(node, loc), field=field))
        raise ContractError(problems) from None
    problems = []
    for where, rules in _arg_rules(contract):
        for name, rule in rules.items():
            if rule.pattern is not None:
                try:
                    re.compile(rule.pattern)
                except re.error as exc:
                    loc = (*where, name, "pattern")
                    problems.append(
                        Problem(
                            file=source,
                            message=f"pattern does not compile: {exc}",
                            line=_line(node, loc),
                            field=".".join(map(str, loc)),
                        )
                    )
    if problems:
        raise ContractError(problems)
    return contract


def _arg_rules(c: TaskContract):
    for name, tool in c.tools.items():
        yield ("tools", name, "arguments"), tool.arguments
    for i, d in enumerate(c.decisions):
        for j, p in enumerate(d.preconditions):
            yield ("decisions", i, "preconditions", j, "arguments"), p.arguments
        for j, e in enumerate(d.evidence):
            yield ("decisions", i, "evidence", j, "match"), e.match


def find_contract(path: str | Path) -> Path:
    """``path`` itself, or the contract file in a folder."""
    p = Path(path)
    if p.is_dir():
        for name in CONTRACT_NAMES:
            if (p / name).is_file():
                return p / name
        raise ContractError.single(str(p), f"no task contract here (expected {' or '.join(CONTRACT_NAMES)})")
    if not p.exists():
        raise ContractError.single(str(p), "no such file or directory")
    return p


def load_contract(path: str | Path) -> TaskContract:
    p = find_contract(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError.single(str(p), f"not UTF-8 text (byte offset {exc.start})") from None
    return parse_contract(text, str(p))


def dump_contract(contract: TaskContract) -> str:
    """The contract as YAML (keys in the model's order, aliases as written by users)."""
    data = contract.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data = {"kind": contract.kind, "version": contract.version, "reviewed": contract.reviewed, **data}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
