"""Reading a world folder: ``load_world(path) -> World``, every problem located.

The manifest's schema problems carry the YAML line and field path; a task's carry its file,
line and field; a table's rows the file, line and column. The checks that need the whole world
run at load too: every name a task uses resolves, gold arguments fit their tool's schema, and
the gold actions replay on the initial state without error (a gold write that fails is the
task's error, never skipped).
"""

from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..contract.limits import node_problem, text_problem
from ..errors import ContractError, Problem
from ..tasks.load import node_line as _line
from ..tasks.model import Role, TaskContract, ToolSpec
from .model import WorldManifest, WorldTask
from . import sql
from .sql import unsafe_statement
from .state import WorldState
from .tools import argument_errors, load_python_tool

__all__ = ["WORLD_NAMES", "World", "find_world", "is_world", "load_world"]

WORLD_NAMES = ("world.yaml", "world.yml")
MAX_TASK_LINE = 1_000_000
MAX_TASK_DEPTH = 32


@dataclass
class World:
    folder: Path
    manifest: WorldManifest
    policy: str
    tasks: list[WorldTask]
    state: WorldState
    contract: TaskContract
    """The world's rules as a task contract (every tool, its kind as ``write``)."""
    task_lines: dict[str, int | None] = field(default_factory=dict, repr=False)
    """Task id -> its line in the tasks file (where a gold replay problem is located)."""
    _expected: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict, repr=False)
    _gold_read: dict[str, tuple[str, frozenset[float]]] = field(default_factory=dict, repr=False)
    """Task id -> what its gold calls' results show (text, numbers); cached by the verdict."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def digest(self) -> str:
        return self.state.initial_digest

    @property
    def write_tools(self) -> dict[str, list[str]]:
        """Write tool -> its ``confirm_phrases`` (how a free-text confirmation request may name it)."""
        tools = self.manifest.tools
        return {n: list(tools[n].confirm_phrases) for n in sorted(tools) if tools[n].kind == "write"}

    def state_for(self, task: WorldTask) -> WorldState:
        """The initial state of ``task``: the world's, or what its state's ``for_task(task)``
        gives (an adapter whose tasks start from their own state)."""
        for_task = getattr(self.state, "for_task", None)
        return for_task(task) if for_task is not None else self.state

    def task(self, task_id: str) -> WorldTask:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise ContractError.single(str(self.folder), f"no task {task_id!r} in world {self.name}")

    def contract_for(self, task: WorldTask) -> TaskContract:
        """The world's rules with the task's own forbidden tools added."""
        extra = [t for t in task.forbidden_tools if t not in self.contract.forbidden_tools]
        if not extra:
            return self.contract
        return self.contract.model_copy(update={"forbidden_tools": [*self.contract.forbidden_tools, *extra]})

    def expected(self, task: WorldTask) -> tuple[str, dict[str, Any]]:
        """(digest, changes) of the gold actions replayed on the initial state; cached."""
        with self._lock:
            got = self._expected.get(task.id)
        if got is not None:
            return got
        from .state import WorldToolError

        src, line = str(self.folder / self.manifest.tasks), self.task_lines.get(task.id)
        ep = self.state_for(task).fork()
        try:
            for i, a in enumerate(task.gold_actions):
                try:
                    ep.run(a.tool, self.manifest.tools[a.tool], a.arguments)
                except WorldToolError as exc:
                    if a.expect_error:
                        continue
                    raise ContractError.single(
                        src,
                        f"task {task.id}: gold action {i} ({a.tool}) fails on the initial state: {exc}",
                        line=line,
                        field=f"gold_actions.{i}",
                    ) from None
                except Exception as exc:  # a Python tool's own bug: the world's error, located, no traceback
                    raise ContractError.single(
                        src,
                        f"task {task.id}: gold action {i} ({a.tool}) crashed the tool: {type(exc).__name__}: {exc}"[
                            :500
                        ],
                        line=line,
                        field=f"gold_actions.{i}",
                    ) from None
                if a.expect_error:
                    raise ContractError.single(
                        src,
                        f"task {task.id}: gold action {i} ({a.tool}) is marked expect_error but succeeds",
                        line=line,
                        field=f"gold_actions.{i}.expect_error",
                    )
            got = (ep.digest(), ep.changes())
        finally:
            ep.close()
        with self._lock:
            self._expected[task.id] = got
        return got

    def close(self) -> None:
        self.state.close()


NAMED_WORLDS: dict[str, str] = {"tau2:": "groundeval.worlds.tau2:world_named"}
"""Prefix -> "module:function" building the world a name like ``tau2:retail`` means; imported
only when such a name is used (a registry of strings: the adapters import this module, not it them)."""


def _named(path: str | Path) -> str | None:
    if isinstance(path, str):
        for prefix, target in NAMED_WORLDS.items():
            if path.startswith(prefix):
                return target
    return None


def is_world(path: str | Path) -> bool:
    if _named(path) is not None:
        return True  # e.g. a τ²-bench domain, read through the tau2 extra
    p = Path(path)
    return (p.is_dir() and any((p / n).is_file() for n in WORLD_NAMES)) or (p.is_file() and p.name in WORLD_NAMES)


def find_world(path: str | Path) -> Path:
    """The manifest of the world at ``path`` (a folder or its world.yaml), or a bundled world's."""
    p = Path(path)
    if not p.exists():
        from ..contract.packs import bundled_root, is_bare_name

        root = bundled_root()
        if root is not None and is_bare_name(path) and (root / str(path)).is_dir():
            p = root / str(path)
    if p.is_dir():
        for n in WORLD_NAMES:
            if (p / n).is_file():
                return p / n
        from ..contract.manifest import LEGACY_NAMES, NATIVE_NAMES

        if any((p / n).is_file() for n in NATIVE_NAMES + LEGACY_NAMES):
            raise ContractError.single(
                str(p),
                "this is an evaluation pack, not a world: run it with 'groundeval run' or 'groundeval eval',"
                " check it with 'groundeval verify' (a world has a world.yaml: docs/worlds.md)",
            )
        raise ContractError.single(str(p), f"no world here (expected {' or '.join(WORLD_NAMES)})")
    if not p.exists():
        raise ContractError.single(str(p), "no such file or directory")
    return p


def _read_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    src = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError.single(src, f"not UTF-8 text (byte offset {exc.start})") from None
    p = text_problem(src, text)
    if p is not None:
        raise ContractError([p])
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        p = node_problem(src, node)
        if p is not None:
            raise ContractError([p])
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ContractError.single(
            src, f"not valid YAML: {getattr(exc, 'problem', None) or exc}", line=mark.line + 1 if mark else None
        ) from None
    return data, node


def _validation_problems(exc: ValidationError, src: str, node: yaml.Node | None, prefix=(), line=None) -> list[Problem]:
    out = []
    for err in exc.errors():
        loc = tuple(x for x in err["loc"] if not (isinstance(x, str) and x.startswith(("function-", "model"))))
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key (see docs/worlds.md)"
        out.append(
            Problem(
                file=src,
                message=msg,
                line=line if line is not None else _line(node, loc),
                field=".".join(str(x) for x in (*prefix, *loc)) or None,
            )
        )
    return out


def _inside(folder: Path, rel: str, src: str, field: str, node: yaml.Node | None = None) -> Path:
    """The file ``rel`` of the world folder; else a problem at the manifest's ``field`` (its line
    from ``node``, the manifest's YAML)."""
    p = (folder / rel).resolve()
    line = _line(node, tuple(field.split("."))) if node is not None else None
    if not p.is_relative_to(folder.resolve()):
        raise ContractError.single(src, f"{rel!r} is outside the world folder", line=line, field=field)
    if not p.is_file():
        raise ContractError.single(src, f"{rel!r}: no such file in the world folder", line=line, field=field)
    return p


def load_world(path: str | Path, *, check_gold: bool = True) -> World:
    """Read and check a world folder (or its ``world.yaml``, a bundled world's name, or
    ``tau2:<domain>``: a τ²-bench domain through the tau2 extra)."""
    target = _named(path)
    if target is not None:
        import importlib

        module, _, function = target.partition(":")
        return getattr(importlib.import_module(module), function)(str(path))
    mpath = find_world(path)
    folder = mpath.parent
    src = str(mpath)
    data, node = _read_yaml(mpath)
    if not isinstance(data, dict):
        raise ContractError.single(src, "a world manifest is a YAML mapping (kind: world, tables, tools, ...)", line=1)
    try:
        manifest = WorldManifest.model_validate(data)
    except ValidationError as exc:
        raise ContractError(_validation_problems(exc, src, node)) from None
    policy_path = _inside(folder, manifest.policy, src, "policy", node)
    policy = policy_path.read_text(encoding="utf-8")
    python_tools = _tools(manifest, folder, src, node)
    if manifest.state is not None:
        state = _adapter_state(folder, manifest, src)
    else:
        state = _load_state(folder, manifest, src, node, python_tools)
    try:
        if isinstance(state, sql.DuckWorldState):
            _check_sql(manifest, state, src, node)
        contract = _contract(manifest)
        tasks, lines = _load_tasks(folder, manifest, src, node)
        world = World(
            folder=folder,
            manifest=manifest,
            policy=policy,
            tasks=tasks,
            state=state,
            contract=contract,
            task_lines=lines,
        )
        if check_gold:
            problems: list[Problem] = []
            for t in tasks:
                try:
                    world.expected(t)
                except ContractError as exc:
                    problems.extend(exc.problems)
            if problems:
                raise ContractError(sorted(problems, key=lambda p: (p.line or 0, p.field or "")))
    except BaseException:
        state.close()
        raise
    return world


def _tools(manifest: WorldManifest, folder: Path, src: str, node: yaml.Node | None) -> dict[str, Any]:
    """The Python tools' functions (none for a world whose state an adapter builds), after
    checking every tool's SQL and patterns (all problems located at once)."""
    problems: list[Problem] = []
    python_tools = {}
    for name, tool in sorted(manifest.tools.items()):
        if tool.python is not None and manifest.state is None:
            python_tools[name] = load_python_tool(tool.python, folder, src, f"tools.{name}.python")
        for i, stmt in enumerate(tool.statements):
            unknown = sorted(set(sql.parameters(stmt)) - set(tool.arguments))
            why = unsafe_statement(stmt) or (
                f"${unknown[0]} is not an argument of this tool (it would be NULL on every call)" if unknown else None
            )
            if why is not None:
                loc = ("tools", name, "sql", *((i,) if isinstance(tool.sql, list) else ()))
                problems.append(Problem(src, why, line=_line(node, loc), field=".".join(map(str, loc))))
        for arg, spec in tool.arguments.items():
            if spec.pattern is not None:
                try:
                    re.compile(spec.pattern)
                except re.error as exc:
                    loc = ("tools", name, "arguments", arg, "pattern")
                    problems.append(
                        Problem(src, f"pattern does not compile: {exc}", line=_line(node, loc), field=".".join(loc))
                    )
    if problems:
        raise ContractError(problems)
    return python_tools


def _check_sql(manifest: WorldManifest, state: sql.DuckWorldState, src: str, node: yaml.Node | None) -> None:
    """Every SQL tool's statements bind on the initial tables (found at load, located at the
    tool, even for a tool no gold action uses)."""
    problems = []
    for name, tool in sorted(manifest.tools.items()):
        for i, stmt in enumerate(tool.statements if tool.python is None else []):
            why = state.statement_problem(stmt)
            if why is not None:
                loc = ("tools", name, "sql", *((i,) if isinstance(tool.sql, list) else ()))
                problems.append(Problem(src, why, line=_line(node, loc), field=".".join(map(str, loc))))
    if problems:
        raise ContractError(problems)


def _adapter_state(folder: Path, m: WorldManifest, src: str) -> WorldState:
    """The state an adapter builds (``state: {adapter: "module:function", options: {...}}``)."""
    import importlib

    assert m.state is not None
    mod, _, attr = m.state.adapter.partition(":")
    try:
        fn = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as exc:
        raise ContractError.single(
            src, f"cannot load state adapter {m.state.adapter!r}: {exc}", field="state.adapter"
        ) from None
    return fn(folder, m, **m.state.options)


def _contract(m: WorldManifest) -> TaskContract:
    roles = m.rules.roles or {"agent": Role(tools=sorted(m.tools))}
    tools = {}
    for name in sorted(m.tools):
        spec = m.rules.tools.get(name) or ToolSpec()
        tools[name] = spec.model_copy(
            update={"write": m.tools[name].kind == "write", "description": m.tools[name].description}
        )
    return TaskContract(
        task=m.name,
        description=m.description,
        reviewed=True,
        roles=roles,
        tools=tools,
        forbidden_tools=list(m.rules.forbidden_tools),
        decisions=list(m.rules.decisions),
        order=list(m.rules.order),
    )


# --------------------------------------------------------------------------- tables


_DECLARED = {"string": "VARCHAR", "integer": "BIGINT", "number": "DOUBLE", "boolean": "BOOLEAN", "json": "JSON"}


def _json_type(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "BOOLEAN"
    if isinstance(v, int):
        return "BIGINT" if -(2**63) <= v < 2**63 else "DOUBLE"
    if isinstance(v, float):
        return "DOUBLE"
    if isinstance(v, str):
        return "VARCHAR"
    return "JSON"


def _safe_columns(cols: list[str], src: str) -> None:
    """Column names become identifiers in SQL: plain names only (never pasted otherwise)."""
    for c in cols:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", c):
            raise ContractError.single(src, f"column name {c!r} is not a plain name (letters, digits, underscore)")


def _column_types(rows: list[tuple[int, dict[str, Any]]], src: str) -> dict[str, str]:
    types: dict[str, str] = {}
    first: dict[str, int] = {}
    for line, row in rows:
        for k, v in row.items():
            t = _json_type(v)
            if isinstance(v, float) and not math.isfinite(v):
                raise ContractError.single(src, "a value is not a finite number", line=line, field=k)
            if t is None:
                types.setdefault(k, "NULL")
                continue
            have = types.get(k, "NULL")
            if have in ("NULL", t):
                types[k] = t
                first.setdefault(k, line)
            elif {have, t} == {"BIGINT", "DOUBLE"}:
                types[k] = "DOUBLE"
            else:
                raise ContractError.single(
                    src,
                    f"column {k!r} holds a {t.lower()} here but a {have.lower()} on line {first[k]}",
                    line=line,
                    field=k,
                )
    return {k: ("VARCHAR" if t == "NULL" else t) for k, t in types.items()}


def _read_rows(path: Path, src: str) -> list[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError.single(src, f"not UTF-8 text (byte offset {exc.start})") from None
    rows: list[tuple[int, dict[str, Any]]] = []
    if path.suffix == ".jsonl":
        for n, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise ContractError.single(src, f"not valid JSON: {getattr(exc, 'msg', exc)}", line=n) from None
            if not isinstance(obj, dict):
                raise ContractError.single(src, "a row is a JSON object", line=n)
            rows.append((n, obj))
    else:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ContractError.single(
                src, f"not valid JSON: {getattr(exc, 'msg', exc)}", line=getattr(exc, "lineno", None)
            ) from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ContractError.single(src, "a .json table is a list of objects (one per row)")
        rows = [(i + 1, r) for i, r in enumerate(data)]  # record numbers
    return rows


def _load_state(  # noqa: C901 - one pass per table, each format its branch
    folder: Path, m: WorldManifest, src: str, node: yaml.Node | None, python_tools: dict[str, Any]
) -> sql.DuckWorldState:
    con = sql.connect()
    json_columns: dict[str, set[str]] = {}
    try:
        for name in sorted(m.tables):
            t = m.tables[name]
            field_ = f"tables.{name}.source"
            path = _inside(folder, t.source, src, field_, node)
            tsrc = str(path)
            suffix = path.suffix.lower()
            if suffix in (".jsonl", ".json"):
                rows = _read_rows(path, tsrc)
                types = _column_types(rows, tsrc)
                for c, t_ in t.columns.items():
                    declared = _DECLARED[t_]
                    if types.get(c, "NULL") not in ("NULL", declared) and {types[c], declared} != {"BIGINT", "DOUBLE"}:
                        raise ContractError.single(
                            tsrc, f"column {c!r} holds {types[c].lower()} values, declared {t_}", field=c
                        )
                    types[c] = declared
                for k in t.key:
                    types.setdefault(k, "VARCHAR")
                for c in t.columns:
                    types.setdefault(c, _DECLARED[t.columns[c]])
                declared = [c for c in t.columns if c not in t.key]
                cols = [*t.key, *declared, *sorted(c for c in types if c not in t.key and c not in t.columns)]
                _safe_columns(cols, tsrc)
                for line, row in rows:
                    for k in t.key:
                        if row.get(k) is None:
                            raise ContractError.single(tsrc, f"key column {k!r} is missing or null", line=line, field=k)
                json_columns[name] = {c for c in cols if types[c] == "JSON"}
                sql.create_json_table(con, name, cols, types, path if rows else None, suffix == ".jsonl")
                first_line: dict[str, int] = {}
                for ln, row in rows:
                    k = json.dumps([row.get(k) for k in t.key], sort_keys=True)
                    if k in first_line:
                        raise ContractError.single(
                            tsrc, f"the key {k} of line {first_line[k]} again", line=ln, field=",".join(t.key)
                        )
                    first_line[k] = ln
                lines = first_line
            elif suffix in (".csv", ".parquet"):
                problem = sql.create_file_table(con, name, path, suffix == ".csv")
                if problem is not None:
                    raise ContractError.single(tsrc, f"cannot read: {problem}")
                have = sql.table_columns(con, name)
                _safe_columns(have, tsrc)
                for k in t.key:
                    if k not in have:
                        raise ContractError.single(src, f"key column {k!r} is not a column of {t.source}", field=field_)
                nulls = sql.null_keys(con, name, t.key)
                if nulls:
                    raise ContractError.single(
                        tsrc, f"{nulls} rows have no value in a key column", field=",".join(t.key)
                    )
                lines = {}
            else:
                raise ContractError.single(
                    src, f"{t.source!r}: a table is .jsonl, .json, .csv or .parquet", field=field_
                )
            dup = sql.duplicate_key(con, name, t.key)
            if dup is not None:
                shown = json.dumps(list(dup), sort_keys=True, default=str)
                raise ContractError.single(
                    tsrc, f"two rows have the key {shown}", line=lines.get(shown), field=",".join(t.key)
                )
        return sql.DuckWorldState(con, {n: list(t.key) for n, t in m.tables.items()}, json_columns, python_tools)
    except BaseException:
        con.close()
        raise


# --------------------------------------------------------------------------- tasks


def _load_tasks(
    folder: Path, m: WorldManifest, msrc: str, mnode: yaml.Node | None = None
) -> tuple[list[WorldTask], dict[str, int | None]]:
    """The tasks in id order, and each one's line in the file."""
    path = _inside(folder, m.tasks, msrc, "tasks", mnode)
    src = str(path)
    problems: list[Problem] = []
    raw: list[tuple[int | None, Any, yaml.Node | None]] = []
    if path.suffix.lower() == ".jsonl":
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ContractError.single(src, f"not UTF-8 text (byte offset {exc.start})") from None
        for n, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            if len(line) > MAX_TASK_LINE:
                problems.append(Problem(src, f"line longer than {MAX_TASK_LINE} characters", line=n))
                continue
            try:
                raw.append((n, json.loads(line), None))
            except (json.JSONDecodeError, RecursionError) as exc:
                problems.append(Problem(src, f"not valid JSON: {getattr(exc, 'msg', exc)}", line=n))
    else:
        data, node = _read_yaml(path)
        if not isinstance(data, list):
            raise ContractError.single(src, "a tasks file is a list of tasks", line=1)
        for i, item in enumerate(data):
            sub = node.value[i] if isinstance(node, yaml.SequenceNode) else None
            raw.append((None, item, sub))
    tasks: list[WorldTask] = []
    seen: dict[str, int | None] = {}
    for line, obj, sub in raw:
        try:
            task = WorldTask.model_validate(obj)
        except ValidationError as exc:
            problems.extend(_validation_problems(exc, src, sub, line=line))
            continue
        where = {"line": line if line is not None else (sub.start_mark.line + 1 if sub is not None else None)}
        if task.id in seen:
            problems.append(Problem(src, f"task id {task.id!r} is used twice", field="id", **where))
        seen[task.id] = where["line"]
        problems.extend(_task_problems(task, m, src, where))
        tasks.append(task)
    if problems:
        raise ContractError(problems)
    if not tasks:
        raise ContractError.single(src, "no tasks")
    return sorted(tasks, key=lambda t: t.id), seen  # outputs follow task ids, whatever the file's line order


def _task_problems(task: WorldTask, m: WorldManifest, src: str, where: dict[str, Any]) -> list[Problem]:
    out = []
    tools = m.tools
    for i, a in enumerate(task.gold_actions):
        if a.tool not in tools:
            out.append(Problem(src, f"unknown tool {a.tool!r}", field=f"gold_actions.{i}.tool", **where))
            continue
        for e in argument_errors(tools[a.tool], a.arguments):
            out.append(Problem(src, f"{a.tool}: {e}", field=f"gold_actions.{i}.arguments", **where))
    for fld, names in (
        ("user.confirms", task.user.confirms),
        ("user.declines", task.user.declines),
        ("forbidden_tools", task.forbidden_tools),
        ("ordered", [n for pair in task.ordered for n in pair]),
    ):
        for n in names:
            if n not in tools:
                out.append(Problem(src, f"unknown tool {n!r}", field=fld, **where))
    gold_tools = {a.tool for a in task.gold_actions}
    for n in task.forbidden_tools:
        if n in gold_tools:
            out.append(Problem(src, f"{n!r} is both forbidden and a gold action", field="forbidden_tools", **where))
    return out
