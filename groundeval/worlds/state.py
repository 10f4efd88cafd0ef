"""A world's state: the protocol every engine implements, and what they all share.

:class:`WorldState` is the world's initial state, loaded once; :meth:`WorldState.fork` gives an
episode its own :class:`EpisodeState`. An episode state runs tools, and reports its
``changes()``: per table, every row (by canonical key) that differs from the initial state
(``None``: deleted). Diffs, digests and verdicts are computed from those by the functions of
this module, so any engine (an adapter over another benchmark's state object included) gets
the same ones by implementing the two protocols.

The digest of a state is ``sha256`` of the canonical JSON of ``{"initial": <initial digest>,
"changes": <its changes>}``: a function of the state alone (for one initial state), computed
without dumping every table at every episode.

The DuckDB engine is :mod:`groundeval.worlds.sql` (the worlds' one query module).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import re
import uuid
from typing import Any, Callable, Iterable, Protocol, runtime_checkable

from ..errors import GroundevalError
from ..tasks.score import state_hash
from .model import RowChange, TableDiff, ToolDef

__all__ = [
    "Changes",
    "EpisodeState",
    "WorldState",
    "WorldToolError",
    "changes_digest",
    "diff_changes",
    "jsonable",
    "touched_tables",
]

Changes = dict[str, dict[str, "dict[str, Any] | None"]]
"""table -> canonical key JSON -> the row now (None: deleted), for rows that differ from the initial state."""


class WorldToolError(GroundevalError):
    """Raised by a tool implementation for an error result ("not found", "nothing to change"):
    the agent gets the message, the state is left as before the call."""


@runtime_checkable
class EpisodeState(Protocol):
    """One episode's isolated copy of the state."""

    def run(self, name: str, tool: ToolDef, arguments: dict[str, Any]) -> Any:
        """Run tool ``name``; return its JSON-able result, or raise :class:`WorldToolError`
        (state unchanged)."""
        ...

    def changes(self, tables: Iterable[str] | None = None) -> Changes:
        """Rows that differ from the initial state, for ``tables`` (default: all)."""
        ...

    def initial_rows(self, table: str, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The initial rows of ``table`` with these canonical keys (absent keys left out)."""
        ...

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        """Every table's rows, sorted by key, values canonical."""
        ...

    def digest(self) -> str: ...

    def close(self) -> None: ...


@runtime_checkable
class WorldState(Protocol):
    """A world's initial state, loaded once, forked per episode."""

    initial_digest: str
    keys: dict[str, list[str]]
    """table -> its key columns."""

    def fork(self) -> EpisodeState: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- shared functions


def jsonable(v: Any) -> Any:
    """A DuckDB value as canonical JSON data."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return int(v) if v == v and v not in (float("inf"), float("-inf")) and v == int(v) else v
    if isinstance(v, decimal.Decimal):
        return jsonable(float(v))
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, _dt.timedelta):
        return v.total_seconds()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return str(v)


def changes_digest(initial_digest: str, changes: Changes) -> str:
    """The digest of a state given its changes from the initial state (empty tables left out)."""
    return state_hash({"initial": initial_digest, "changes": {t: rows for t, rows in changes.items() if rows}})


def _key_dict(keycols: list[str], row: dict[str, Any]) -> dict[str, Any]:
    return {k: row.get(k) for k in keycols}


def diff_changes(
    keys: dict[str, list[str]],
    before: Changes,
    after: Changes,
    initial: Callable[[str, list[str]], dict[str, dict[str, Any]]],
) -> dict[str, TableDiff]:
    """The row-level diff between two states given by their changes from one initial state.

    ``initial(table, keys)`` returns initial rows. Tables and rows in key order; tables with no
    difference are left out."""
    out: dict[str, TableDiff] = {}
    for table in sorted(set(before) | set(after)):
        b, a = before.get(table, {}), after.get(table, {})
        differing = sorted(k for k in set(b) | set(a) if (k in b) != (k in a) or b.get(k) != a.get(k))
        if not differing:
            continue
        need = [k for k in differing if k not in b or k not in a]
        init = initial(table, need) if need else {}
        d = TableDiff()
        for k in differing:
            old = b[k] if k in b else init.get(k)
            new = a[k] if k in a else init.get(k)
            if old == new:
                continue
            if old is None:
                d.added.append(new)  # type: ignore[arg-type]
            elif new is None:
                d.removed.append(old)
            else:
                d.changed.append(RowChange(key=_key_dict(keys[table], old), before=old, after=new))
        if d.added or d.removed or d.changed:
            out[table] = d
    return out


_WRITE_TARGET = re.compile(
    r"^\s*(?:WITH\b.*?\)\s*)?(?:UPDATE|INSERT\s+(?:OR\s+\w+\s+)?INTO|DELETE\s+FROM)\s+\"?([A-Za-z_][A-Za-z0-9_]*)",
    re.IGNORECASE | re.DOTALL,
)


def touched_tables(tool: ToolDef, all_tables: Iterable[str]) -> list[str]:
    """Tables a call of ``tool`` may change: none for a read, the declared ``tables``, the
    targets of its SQL statements, or every table (a Python tool that declares none)."""
    tables = sorted(all_tables)
    if tool.kind == "read":
        return []
    if tool.tables is not None:
        return sorted(tool.tables)
    if tool.python is not None:
        return tables
    found = set()
    for stmt in tool.statements:
        m = _WRITE_TARGET.match(stmt)
        if m is None:
            return tables
        found.add(m.group(1))
    known = [t for t in tables if t in found]
    return known if len(known) == len(found) else tables


# --------------------------------------------------------------------------- DuckDB
