"""τ²'s database as a world state: the engine's ``WorldState`` / ``EpisodeState`` protocols over
τ²'s own pydantic database objects and toolkits (τ²'s own tool implementations run on them).

Tables. Each field of a τ² database becomes a table: a mapping of id to record (retail's
``orders``, airline's ``flights``) is a table keyed by that id — by the record's own field that
holds it when there is one (``order_id``), else ``_key``; a list of records (telecom's
``lines``) is keyed by its first unique ``*_id`` field (else its position, ``_pos``); the other
fields of a database (telecom's ``device``, ``surroundings`` of the user's phone) are rows of one
table ``fields`` keyed by ``field``. The user's database (telecom) has the same tables prefixed
``user_``. A row is the record's ``model_dump(mode="json")``.

Episodes. The initial database is never written: an episode's mappings are copy-on-write views
(a write tool gets a deep copy of each record it touches, the first time in the call; a read
tool sees the shared records, which it does not change — τ²'s read/write markers say so, and
the tau2 extra's tests check it on every task); lists and single fields are deep copies per
episode (they are small: telecom's). So forking costs nothing on retail's 1,500 records, and
``changes()`` looks only at the records an episode touched. A tool that raises is undone (its
records restored) and reported as :class:`~groundeval.worlds.state.WorldToolError` — τ² itself
keeps what a failing tool changed before it raised; none of the tools of the installed domains
changes anything before its checks, so the two agree (measured by the agreement test).

Ids. Telecom's ``send_payment_request``-side bill creation draws ``uuid4()``: the adapter gives
that module a counter-based ``uuid4`` per episode (same calls, same ids), so a replay reproduces
the recorded ids and the gold state.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import uuid
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any, Iterable

from ...tasks.score import canonical_json, state_hash
from ..model import ToolDef
from ..state import Changes, WorldToolError, changes_digest

__all__ = ["USER_PREFIX", "Tau2EpisodeState", "Tau2WorldState", "deterministic_ids", "tool_result"]

USER_PREFIX = "user__"
"""World tool names of the user's tools (telecom): ``user__toggle_data`` is τ²'s ``toggle_data``
called by the user."""

_MISSING = object()


# --------------------------------------------------------------------------- deterministic ids


class _Ids:
    """A stand-in for the ``uuid`` module inside τ²'s tool modules: ``uuid4()`` from a counter.

    The counter is the calling thread's: episodes run at once on threads (``-j``, Ray's
    ``--concurrency``), each setting it to its own before a tool call and reading it back
    after; one shared counter would let a call draw the id of another episode's count."""

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def n(self) -> int:
        return getattr(self._local, "n", 0)

    @n.setter
    def n(self, value: int) -> None:
        self._local.n = value

    def reset(self) -> None:
        self.n = 0

    def uuid4(self) -> uuid.UUID:
        self.n += 1
        h = hashlib.sha256(f"groundeval-tau2:{self.n}".encode()).digest()
        return uuid.UUID(bytes=h[:16], version=4)

    def __getattr__(self, name: str) -> Any:
        return getattr(uuid, name)


deterministic_ids = _Ids()


def install_ids(modules: Iterable[Any]) -> None:
    for m in modules:
        if getattr(m, "uuid", None) is uuid:
            m.uuid = deterministic_ids


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class TableSpec:
    name: str
    owner: str  # "assistant" (the agent's database) or "user"
    field: str | None  # the database attribute; None: the table of single fields
    kind: str  # map | list | fields
    key: str


def _dump(v: Any) -> Any:
    if hasattr(v, "model_dump"):
        return v.model_dump(mode="json")
    if isinstance(v, dict):
        return {str(k): _dump(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_dump(x) for x in v]
    return json.loads(json.dumps(v, default=str))


def _map_key(items: dict[Any, Any]) -> str:
    values = list(items.items())
    if values and all(hasattr(v, "model_dump") for _, v in values):
        fields = type(values[0][1]).model_fields
        for f in fields:
            if all(getattr(v, f, _MISSING) == k for k, v in values):
                return f
    return "_key"


def _list_key(items: list[Any]) -> str:
    if items and all(hasattr(v, "model_dump") for v in items):
        for f in type(items[0]).model_fields:
            if f == "id" or f.endswith("_id"):
                vals = [getattr(v, f, None) for v in items]
                if all(isinstance(x, str) for x in vals) and len(set(vals)) == len(vals):
                    return f
    return "_pos"


def table_specs(agent_db: Any, user_db: Any) -> list[TableSpec]:
    out = []
    for owner, db, prefix in (("assistant", agent_db, ""), ("user", user_db, "user_")):
        if db is None:
            continue
        singles = False
        for f in type(db).model_fields:
            v = getattr(db, f)
            if isinstance(v, dict):
                out.append(TableSpec(prefix + f, owner, f, "map", _map_key(v)))
            elif isinstance(v, list):
                out.append(TableSpec(prefix + f, owner, f, "list", _list_key(v)))
            else:
                singles = True
        if singles:
            out.append(TableSpec(prefix + "fields", owner, None, "fields", "field"))
    names = [t.name for t in out]
    if len(set(names)) != len(names):  # pragma: no cover - no installed domain does this
        raise ValueError(f"tau2 database fields give one table name twice: {names}")
    return sorted(out, key=lambda t: t.name)


def _map_row(spec: TableSpec, k: Any, v: Any) -> dict[str, Any]:
    row = _dump(v)
    if not isinstance(row, dict):
        row = {"value": row}
    if spec.key not in row:
        row = {spec.key: k, **row}
    return row


def _rows(spec: TableSpec, db: Any) -> dict[str, dict[str, Any]]:
    """canonical key json -> row, for a list or single-fields table (small: computed whole)."""
    out: dict[str, dict[str, Any]] = {}
    if spec.kind == "list":
        for i, v in enumerate(getattr(db, spec.field)):  # type: ignore[arg-type]
            row = _dump(v)
            if spec.key == "_pos":
                row = {"_pos": i, **row}
            out[canonical_json([row[spec.key]])] = row
    else:
        for f in type(db).model_fields:
            v = getattr(db, f)
            if not isinstance(v, (dict, list)):
                out[canonical_json([f])] = {"field": f, "value": _dump(v)}
    return out


# --------------------------------------------------------------------------- copy-on-write mappings


class _CowMap(MutableMapping):
    """A mapping over the initial records: reads see them; in a write call, each record touched
    is deep-copied once into the episode's overlay (and its previous state kept for an undo)."""

    __slots__ = ("_base", "_over", "_gone", "_ep", "_name")

    def __init__(self, base: dict[Any, Any], ep: Tau2EpisodeState, name: str):
        self._base = base
        self._over: dict[Any, Any] = {}
        self._gone: set[Any] = set()
        self._ep = ep
        self._name = name

    def _touch(self, k: Any) -> None:
        """First touch of ``k`` in this write call: keep what was there for an undo."""
        undo = self._ep._undo
        key = (self._name, k)
        if key not in undo:
            undo[key] = (self._over.get(k, _MISSING), k in self._gone)

    def __getitem__(self, k: Any) -> Any:
        ep = self._ep
        if k in self._over:
            if ep._writing and (self._name, k) not in ep._undo:
                self._touch(k)
                self._over[k] = copy.deepcopy(self._over[k])
            return self._over[k]
        if k in self._gone:
            raise KeyError(k)
        v = self._base[k]
        if ep._writing:
            self._touch(k)
            v = self._over[k] = copy.deepcopy(v)
        return v

    def __setitem__(self, k: Any, v: Any) -> None:
        self._touch(k)
        self._over[k] = v
        self._gone.discard(k)

    def __delitem__(self, k: Any) -> None:
        if k not in self:
            raise KeyError(k)
        self._touch(k)
        self._over.pop(k, None)
        if k in self._base:
            self._gone.add(k)

    def __contains__(self, k: object) -> bool:
        return k in self._over or (k in self._base and k not in self._gone)

    def __iter__(self) -> Iterator[Any]:
        for k in self._base:
            if k not in self._gone:
                yield k
        for k in self._over:
            if k not in self._base:
                yield k

    # reads iterate τ²'s own dict directly while the episode has changed nothing in it (the
    # mixin's items() would look every key up again: retail's user search scans 500 users)
    def keys(self) -> Any:
        return self._base.keys() if not self._over and not self._gone else super().keys()

    def items(self) -> Any:
        if not self._over and not self._gone and not self._ep._writing:
            return self._base.items()
        return super().items()

    def values(self) -> Any:
        if not self._over and not self._gone and not self._ep._writing:
            return self._base.values()
        return super().values()

    def __len__(self) -> int:
        return len(self._base) - len(self._gone) + sum(1 for k in self._over if k not in self._base)

    def _undo_key(self, k: Any, was: Any, gone: bool) -> None:
        if was is _MISSING:
            self._over.pop(k, None)
        else:
            self._over[k] = was
        if gone:
            self._gone.add(k)
        else:
            self._gone.discard(k)

    def touched(self) -> list[Any]:
        return list(self._over) + [k for k in self._gone if k not in self._over]


# --------------------------------------------------------------------------- the states


def tool_result(resp: Any) -> Any:
    """A τ² tool's response as JSON data: what τ² would send the agent (its ``to_json_str``),
    parsed back when it is JSON."""
    from tau2.environment.environment import Environment

    text = Environment.to_json_str(resp)
    try:
        return json.loads(text)
    except ValueError:
        return text


class Tau2WorldState:
    """The initial state of a τ² domain (for one task's initial state when it has one)."""

    def __init__(self, env: Any):
        self.env = env
        agent_db = env.tools.db if env.tools is not None else None
        user_db = env.user_tools.db if env.user_tools is not None else None
        self.agent_db, self.user_db = agent_db, user_db
        self.specs = table_specs(agent_db, user_db)
        self.by_name = {s.name: s for s in self.specs}
        self.keys = {s.name: [s.key] for s in self.specs}
        self._initial: dict[str, dict[str, dict[str, Any]]] = {}
        snap = {}
        for s in self.specs:
            rows = self._initial_table(s)
            snap[s.name] = [rows[k] for k in sorted(rows)]
        self.initial_digest = state_hash(snap)

    def _db(self, owner: str) -> Any:
        return self.agent_db if owner == "assistant" else self.user_db

    def _initial_table(self, s: TableSpec) -> dict[str, dict[str, Any]]:
        got = self._initial.get(s.name)
        if got is None:
            db = self._db(s.owner)
            if s.kind == "map":
                got = {canonical_json([k]): _map_row(s, k, v) for k, v in getattr(db, s.field).items()}  # type: ignore[arg-type]
            else:
                got = _rows(s, db)
            self._initial[s.name] = got
        return got

    def initial_row(self, s: TableSpec, k: Any) -> dict[str, Any] | None:
        return self._initial_table(s).get(canonical_json([k]))

    def fork(self) -> Tau2EpisodeState:
        return Tau2EpisodeState(self)

    def close(self) -> None:
        pass


class Tau2EpisodeState:
    """One episode over a :class:`Tau2WorldState`: τ²'s environment with the episode's database."""

    def __init__(self, world: Tau2WorldState):
        self.world = world
        self._writing = False
        self._undo: dict[tuple[str, Any], tuple[Any, bool]] = {}
        self._maps: dict[str, _CowMap] = {}
        env = copy.copy(world.env)
        if world.env.tools is not None:
            env.tools = copy.copy(world.env.tools)
            env.tools.db = self._episode_db(world.agent_db, "")
        if world.env.user_tools is not None:
            env.user_tools = copy.copy(world.env.user_tools)
            env.user_tools.db = self._episode_db(world.user_db, "user_")
        self.env = env
        deterministic_ids.reset()
        self._ids = 0

    def _episode_db(self, db: Any, prefix: str) -> Any:
        values = {}
        for f in type(db).model_fields:
            v = getattr(db, f)
            if isinstance(v, dict):
                m = self._maps[prefix + f] = _CowMap(v, self, prefix + f)
                values[f] = m
            else:
                values[f] = copy.deepcopy(v)
        return type(db).model_construct(**values)

    # -- the protocol

    def run(self, name: str, tool: ToolDef, arguments: dict[str, Any]) -> Any:
        requestor, tname = ("user", name[len(USER_PREFIX) :]) if name.startswith(USER_PREFIX) else ("assistant", name)
        self._writing = tool.kind == "write"
        self._undo = {}
        whole = self._copy_small() if self._writing else None
        deterministic_ids.n = self._ids
        try:
            resp = self.env.make_tool_call(tname, requestor=requestor, **arguments)
            self.env.sync_tools()
        except Exception as exc:  # τ²'s tools raise for an error result (ValueError, KeyError, TypeError ...)
            self._restore(whole)
            raise WorldToolError(_message(exc)) from None
        finally:
            self._writing = False
            self._ids = deterministic_ids.n
        return tool_result(resp)

    def run_assertion(self, env_type: str, func_name: str, arguments: dict[str, Any]) -> Any:
        """τ²'s own assertion function ``func_name`` of the agent's (``assistant``) or the user's
        toolkit, on this episode's state (read only)."""
        kit = self.env.tools if env_type == "assistant" else self.env.user_tools
        return getattr(kit, func_name)(**arguments)

    def _copy_small(self) -> list[tuple[Any, str, Any]]:
        """Deep copies of the non-mapping fields (lists, single fields), to undo a failed write."""
        out = []
        for kit in (self.env.tools, self.env.user_tools):
            if kit is None:
                continue
            for f in type(kit.db).model_fields:
                v = getattr(kit.db, f)
                if not isinstance(v, _CowMap):
                    out.append((kit.db, f, copy.deepcopy(v)))
        return out

    def _restore(self, whole: list[tuple[Any, str, Any]] | None) -> None:
        for (name, k), (was, gone) in self._undo.items():
            self._maps[name]._undo_key(k, was, gone)
        self._undo = {}
        for db, f, v in whole or []:
            object.__setattr__(db, f, v)

    def _db(self, owner: str) -> Any:
        kit = self.env.tools if owner == "assistant" else self.env.user_tools
        return kit.db

    def changes(self, tables: Iterable[str] | None = None) -> Changes:
        w = self.world
        names = sorted(w.by_name) if tables is None else sorted(tables)
        out: Changes = {}
        for name in names:
            s = w.by_name[name]
            rows: dict[str, dict[str, Any] | None] = {}
            if s.kind == "map":
                m = self._maps[name]
                for k in m.touched():
                    now = _map_row(s, k, m[k]) if k in m else None
                    if now != w.initial_row(s, k):
                        rows[canonical_json([k])] = now
            else:
                init = w._initial_table(s)
                cur = _rows(s, self._db(s.owner))
                for k in set(init) | set(cur):
                    if init.get(k) != cur.get(k):
                        rows[k] = cur.get(k)
            out[name] = dict(sorted(rows.items()))
        return out

    def initial_rows(self, table: str, keys: list[str]) -> dict[str, dict[str, Any]]:
        init = self.world._initial_table(self.world.by_name[table])
        return {k: init[k] for k in keys if k in init}

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        out = {}
        changes = self.changes()
        for s in self.world.specs:
            rows = dict(self.world._initial_table(s))
            for k, row in changes[s.name].items():
                if row is None:
                    rows.pop(k, None)
                else:
                    rows[k] = row
            out[s.name] = [rows[k] for k in sorted(rows)]
        return out

    def digest(self) -> str:
        return changes_digest(self.world.initial_digest, self.changes())

    def close(self) -> None:
        self._maps = {}

    def __enter__(self) -> Tau2EpisodeState:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _message(exc: BaseException) -> str:
    """The error text τ² gives the agent is ``"Error: " + str(exc)``: kept as is (after that prefix),
    so a replayed error reads like the recorded one."""
    return str(exc)
