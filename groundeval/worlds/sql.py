"""The worlds' DuckDB engine and every query worlds run (their one query module).

DuckDB: the initial tables live in the instance's default database; each *lane* (one per
episode running at once) is an attached in-memory database holding a copy made once, and an
episode is one transaction on its lane, rolled back when it closes: set-up is ``BEGIN``.
DuckDB has no savepoints and an error aborts a transaction, so a failed tool call is undone by
restoring its tables' rows (and an aborted transaction is rebuilt from the episode's changes).
A write's affected keys come back with ``RETURNING``, so the episode's changes are updated by
key. Loading a world's tables is here too (:func:`load_tables`).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterable

from ..tasks.score import canonical_json, state_hash
from .model import ToolDef
from .state import Changes, WorldToolError, changes_digest, jsonable

__all__ = [
    "DuckEpisodeState",
    "DuckWorldState",
    "StateHandle",
    "connect",
    "create_file_table",
    "create_json_table",
    "duplicate_key",
    "table_columns",
    "unsafe_statement",
]


# --------------------------------------------------------------------------- loading the tables


def connect() -> Any:
    """The in-memory DuckDB instance a world's initial state is loaded into (one thread per query:
    episodes run in parallel, each on its own cursor)."""
    import duckdb

    # As groundeval.store.store does: DuckDB's client tries ``import pandas`` for every bound
    # parameter, and without pandas each try searches sys.path again (about half of a tool call's
    # cost here). Recording its absence once makes those imports fail at once.
    if "pandas" not in sys.modules and importlib.util.find_spec("pandas") is None:
        sys.modules["pandas"] = None  # type: ignore[assignment]

    return duckdb.connect(":memory:", config={"threads": 1})


def _ident(name: str) -> str:
    return '"' + name + '"'  # names are checked plain identifiers (load.py)


def create_json_table(
    con: Any, name: str, cols: list[str], types: dict[str, str], path: Path | None, lines: bool
) -> None:
    """Table ``name`` with these typed columns, filled from the JSON file ``path`` (JSON lines or
    an array; None: left empty). The file is read by DuckDB with the types given, never guessed."""
    coldefs = ", ".join(_ident(c) + " " + types[c] for c in cols)
    con.execute(f"CREATE TABLE {_ident(name)} ({coldefs})")
    if path is None:
        return
    spec = "{" + ", ".join(f"'{c}': '{types[c]}'" for c in cols) + "}"
    fmt = "newline_delimited" if lines else "array"
    collist = ", ".join(_ident(c) for c in cols)
    con.execute(
        f"INSERT INTO {_ident(name)} SELECT {collist} FROM read_json(?, format = '{fmt}', columns = {spec})",
        [str(path)],
    )


def create_file_table(con: Any, name: str, path: Path, csv: bool) -> str | None:
    """Table ``name`` from a CSV (header row, types detected) or Parquet file; the reader's
    complaint when it cannot (None: done)."""
    import duckdb

    reader = "read_csv_auto(?, header = true)" if csv else "read_parquet(?)"
    try:
        con.execute(f"CREATE TABLE {_ident(name)} AS SELECT * FROM {reader}", [str(path)])
    except duckdb.Error as exc:
        return str(exc).splitlines()[0]
    return None


def table_columns(con: Any, name: str, catalog: str | None = None) -> list[str]:
    where = f"{catalog}.main.{_ident(name)}" if catalog else _ident(name)
    return [r[0] for r in con.execute(f"DESCRIBE {where}").fetchall()]


def null_keys(con: Any, name: str, keys: list[str]) -> int:
    """Rows of ``name`` with a null in a key column."""
    where = " OR ".join(f"{_ident(k)} IS NULL" for k in keys)
    return int(con.execute(f"SELECT count(*) FROM {_ident(name)} WHERE {where}").fetchone()[0])


def duplicate_key(con: Any, name: str, keys: list[str]) -> tuple[Any, ...] | None:
    """The first key (in key order) two rows of ``name`` share, or None."""
    keycols = ", ".join(_ident(k) for k in keys)
    return con.execute(
        f"SELECT {keycols} FROM {_ident(name)} GROUP BY {keycols} HAVING count(*) > 1 ORDER BY {keycols} LIMIT 1"
    ).fetchone()


# --------------------------------------------------------------------------- the engine


_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def parameters(stmt: str) -> list[str]:
    """The ``$name`` parameters a statement binds."""
    return _PARAM.findall(stmt)


_DML = re.compile(r"^\s*(UPDATE|INSERT|DELETE)\b", re.IGNORECASE)


class StateHandle:
    """What a Python tool gets: parameterised SQL over the episode's state (never string
    pasting). ``query`` returns rows as dicts; ``execute`` returns the rows changed."""

    def __init__(self, episode: DuckEpisodeState):
        self._ep = episode

    def query(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        cur = self._ep._exec(sql, params or {})
        cols = [d[0] for d in cur.description or []]
        return [dict(zip(cols, map(jsonable, r))) for r in cur.fetchall()]

    def one(self, sql: str, params: dict[str, Any] | None = None) -> dict[str, Any] | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> int:
        cur = self._ep._exec(sql, params or {})
        if cur.description and cur.description[0][0] == "Count":
            return int(cur.fetchone()[0])
        return len(cur.fetchall())

    def query_rows(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Rows as tuples (faster for large reads)."""
        return [tuple(map(jsonable, r)) for r in self._ep._exec(sql, params or {}).fetchall()]


class _Lane:
    def __init__(self, name: str, cursor: Any):
        self.name = name
        self.cursor = cursor


class DuckWorldState:
    """The initial tables in one DuckDB instance; lanes (copies) made on demand, reused."""

    def __init__(
        self,
        con: Any,
        keys: dict[str, list[str]],
        json_columns: dict[str, set[str]] | None = None,
        python_tools: dict[str, Callable[..., Any]] | None = None,
    ):
        self._con = con
        self.python_tools = dict(python_tools or {})
        self.keys = {t: list(k) for t, k in sorted(keys.items())}
        self.json_columns = {t: set(c) for t, c in (json_columns or {}).items()}
        self.columns: dict[str, list[str]] = {
            t: [r[0] for r in con.execute(f'DESCRIBE memory.main."{t}"').fetchall()] for t in self.keys
        }
        self.counts = {t: int(con.execute(f'SELECT count(*) FROM memory.main."{t}"').fetchone()[0]) for t in self.keys}
        con.execute("SET enable_external_access = false")  # tools read no files, whatever an agent sends
        self._initial_cache: dict[str, dict[str, dict[str, Any] | None]] = {}
        self._lock = threading.Lock()
        self._free: list[_Lane] = []
        self._n_lanes = 0
        self._closed = False
        self.initial_digest = state_hash(self._snapshot(con, "memory"))

    # -- reading
    def _rows(self, cur: Any, table: str, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        res = cur.execute(sql, params or [])
        cols = [d[0] for d in res.description]
        js = self.json_columns.get(table, set())
        out = []
        for r in res.fetchall():
            row = {}
            for c, v in zip(cols, r):
                row[c] = json.loads(v) if c in js and isinstance(v, str) else jsonable(v)
            out.append(row)
        return out

    def _order(self, table: str) -> str:
        return ", ".join(f'"{k}"' for k in self.keys[table])

    def _snapshot(self, cur: Any, db: str) -> dict[str, list[dict[str, Any]]]:
        return {t: self._rows(cur, t, f'SELECT * FROM {db}.main."{t}" ORDER BY {self._order(t)}') for t in self.keys}

    def key_of(self, table: str, row: dict[str, Any]) -> str:
        return canonical_json([row.get(k) for k in self.keys[table]])

    def rows_by_key(self, cur: Any, catalog: str, table: str, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The rows of ``catalog``'s ``table`` with these canonical keys (one scan per 256 keys)."""
        out: dict[str, dict[str, Any]] = {}
        keycols = self.keys[table]
        one = "(" + " AND ".join(f'"{k}" = ?' for k in keycols) + ")"  # keys are never null (load checks)
        for i in range(0, len(keys), 256):
            chunk = keys[i : i + 256]
            params = [v for k in chunk for v in json.loads(k)]
            if len(keycols) == 1:
                where = f'"{keycols[0]}" IN (' + ", ".join("?" for _ in chunk) + ")"
            else:
                where = " OR ".join(one for _ in chunk)
            sql = f'SELECT * FROM {catalog}.main."{table}" WHERE ' + where
            for row in self._rows(cur, table, sql, params):
                out[self.key_of(table, row)] = row
        return out

    def initial_rows(self, cur: Any, table: str, keys: list[str]) -> dict[str, dict[str, Any]]:
        """Initial rows by key, remembered (the initial state never changes; absent keys too)."""
        cache = self._initial_cache.setdefault(table, {})
        missing = [k for k in keys if k not in cache]
        if missing:
            found = self.rows_by_key(cur, "memory", table, missing)
            for k in missing:
                cache[k] = found.get(k)
        return {k: cache[k] for k in keys if cache[k] is not None}  # type: ignore[misc]

    def statement_problem(self, stmt: str) -> str | None:
        """Why a tool's statement does not bind on the initial tables (an unknown table or column,
        a type clash), None when it does: ``EXPLAIN`` with every parameter NULL, nothing run."""
        import duckdb

        names = sorted(set(_PARAM.findall(stmt)))
        cur = self._con.cursor()
        try:
            cur.execute("EXPLAIN " + stmt, {n: None for n in names}) if names else cur.execute("EXPLAIN " + stmt)
        except duckdb.Error as exc:
            return _duck_message(exc)
        finally:
            cur.close()
        return None

    # -- lanes
    def _acquire(self) -> _Lane:
        with self._lock:
            if self._closed:
                raise RuntimeError("the world state is closed")
            if self._free:
                return self._free.pop()
            self._n_lanes += 1
            name = f"lane{self._n_lanes}"
            self._con.execute(f"ATTACH ':memory:' AS {name}")
            cur = self._con.cursor()
        cur.execute(f"USE {name}")
        for t in self.keys:
            # the key is the lane table's primary key: a write that would give two rows one key
            # fails (an error result, the state as before) instead of breaking the key -> row model
            described = cur.execute(f'DESCRIBE memory.main."{t}"').fetchall()
            coldefs = ", ".join(f'"{r[0]}" {r[1]}' for r in described)
            keycols = ", ".join(f'"{k}"' for k in self.keys[t])
            cur.execute(f'CREATE TABLE "{t}" ({coldefs}, PRIMARY KEY ({keycols}))')
            cur.execute(f'INSERT INTO "{t}" SELECT * FROM memory.main."{t}"')
        return _Lane(name, cur)

    def _release(self, lane: _Lane) -> None:
        with self._lock:
            self._free.append(lane)

    @property
    def lanes(self) -> int:
        return self._n_lanes

    def warm(self, n: int) -> None:
        """Make ``n`` lanes ready (their copy is the one-off cost of running n episodes at once)."""
        got = [self._acquire() for _ in range(max(0, n - len(self._free)))]
        for lane in got:
            self._release(lane)

    def fork(self) -> DuckEpisodeState:
        return DuckEpisodeState(self, self._acquire())

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._free.clear()
        self._con.close()


class DuckEpisodeState:
    """One episode: a transaction on a lane, rolled back on close."""

    def __init__(self, world: DuckWorldState, lane: _Lane):
        self.world = world
        self._lane = lane
        self._cur = lane.cursor
        self._cur.execute("BEGIN TRANSACTION")
        self._changes: Changes = {}  # the last known changes, per table (kept to rebuild an aborted transaction)
        self._initially: dict[str, dict[str, bool]] = {}  # table -> changed key -> it existed initially
        self._closed = False
        self._writing = False
        self._touched: dict[str, dict[str, dict[str, Any] | None]] = {}  # during a call: key -> row now
        self._full: set[str] = set()  # during a call: tables whose changes must be read in full
        self._recount: set[str] = set()  # during a call: tables where a key may have moved (count check)
        self.handle = StateHandle(self)

    # -- low level
    def _exec(self, sql: str, params: dict[str, Any]) -> Any:
        """Run one statement with its named parameters. A write's affected keys are collected
        (``RETURNING`` the key columns) so the changes are updated by key, not by a full diff."""
        why = unsafe_statement(sql)
        if why is not None:
            raise WorldToolError(why)
        names = set(_PARAM.findall(sql))
        bound = {n: _bindable(params.get(n)) for n in sorted(names)}
        kind = _statement_kind(sql)
        if kind != "read":
            if not self._writing:
                raise WorldToolError("a read tool tried to change the state")
            m = _TRACKABLE.match(sql)
            table = m.group(1) if m is not None else None
            if table in self.world.keys and len(_RETURNING.findall(sql)) <= 1:
                own = _RETURNING.search(sql) is not None  # its own RETURNING list: the rows go after it
                stmt = sql.rstrip().rstrip(";") + (", *" if own else " RETURNING *")
                res = self._cur.execute(stmt, bound) if bound else self._cur.execute(stmt)
                got = res.fetchall()
                cols = self.world.columns[table]
                n = len(cols)
                self._note_rows(table, cols, [r[-n:] for r in got], deleted=bool(_DELETE.match(sql)))
                if _may_move_keys(sql, self.world.keys[table]):
                    self._recount.add(table)
                if own:
                    return _Rows(res.description[:-n], [r[:-n] for r in got])
                return _Count(len(got))
            self._full.update([table] if table in self.world.keys else self.world.keys)
        return self._cur.execute(sql, bound) if bound else self._cur.execute(sql)

    def _note_rows(self, table: str, cols: list[str], rows: list[tuple[Any, ...]], deleted: bool) -> None:
        """A write's returned rows (whole, in the table's column order) as the latest state of
        their keys (None: deleted)."""
        js = self.world.json_columns.get(table, set())
        touched = self._touched.setdefault(table, {})
        for r in rows:
            row = {c: (json.loads(v) if c in js and isinstance(v, str) else jsonable(v)) for c, v in zip(cols, r)}
            touched[self.world.key_of(table, row)] = None if deleted else row

    def _recover(self) -> None:
        """After a DuckDB error (the transaction is aborted): a new transaction holding the
        changes known before the failed call."""
        self._cur.execute("ROLLBACK")
        self._cur.execute("BEGIN TRANSACTION")
        for table, rows in sorted(self._changes.items()):
            self._set_rows(table, rows)

    def _set_rows(self, table: str, rows: dict[str, dict[str, Any] | None]) -> None:
        """Make the rows with these keys equal to the given rows (None: absent)."""
        keycols = self.world.keys[table]
        cols = self.world.columns[table]
        js = self.world.json_columns.get(table, set())
        where = " AND ".join(f'"{k}" IS NOT DISTINCT FROM ?' for k in keycols)
        collist = ", ".join(f'"{c}"' for c in cols)
        ins = f'INSERT INTO "{table}" ({collist}) VALUES ({", ".join("?" for _ in cols)})'
        for k in sorted(rows):
            self._cur.execute(f'DELETE FROM "{table}" WHERE {where}', json.loads(k))
        for k in sorted(rows):
            row = rows[k]
            if row is not None:
                self._cur.execute(
                    ins, [json.dumps(row.get(c)) if c in js and row.get(c) is not None else row.get(c) for c in cols]
                )

    # -- the protocol
    def run(self, name: str, tool: ToolDef, arguments: dict[str, Any]) -> Any:
        self._writing = tool.kind == "write"
        self._touched, self._full, self._recount = {}, set(), set()
        before = {t: dict(rows) for t, rows in self._changes.items()}  # every write goes through run()
        try:
            try:
                if tool.python is not None:
                    result = self.world.python_tools[name](self.handle, **arguments)
                else:
                    result = self._run_sql(tool, arguments)
            except WorldToolError:
                self._undo(before)
                raise
            except Exception as exc:  # a DuckDB error (bad cast of an argument, a constraint): an error result
                import duckdb

                if isinstance(exc, duckdb.Error):
                    self._recover()
                    raise WorldToolError(_duck_message(exc)) from None
                try:
                    self._undo(before)
                except duckdb.Error:
                    self._recover()
                raise
            self._update_changes()
        finally:
            self._writing = False
            self._touched, self._full, self._recount = {}, set(), set()
        return jsonable(result)

    def _update_changes(self) -> None:
        """Bring the cached changes up to date with the call's writes: by the keys they
        returned, checked by the table's row count; read in full where that is not enough."""
        for t in sorted(set(self._touched) | self._full):
            if t not in self._full:
                now = self._touched[t]
                keys = sorted(now)
                init = self.world.initial_rows(self._cur, t, keys)
                ch = self._changes.setdefault(t, {})
                present = self._initially.setdefault(t, {})
                for k in keys:
                    if now.get(k) == init.get(k):
                        ch.pop(k, None)
                        present.pop(k, None)
                    else:
                        ch[k] = now.get(k)
                        present[k] = k in init
                if t not in self._recount:  # every changed row was returned by its key
                    continue
                added = sum(1 for k, row in ch.items() if row is not None and not present.get(k, False))
                gone = sum(1 for row in ch.values() if row is None)
                have = self._cur.execute(f'SELECT count(*) FROM main."{t}"').fetchone()[0]
                if have == self.world.counts[t] + added - gone:
                    continue
            self._changes[t] = self._query_changes([t])[t]
            init = self.world.initial_rows(self._cur, t, sorted(self._changes[t]))
            self._initially[t] = {k: k in init for k in self._changes[t]}

    def _undo(self, before: Changes) -> None:
        """Put back the rows the failed call changed (by the keys its writes returned)."""
        tables = sorted(set(self._touched) | self._full)
        full = [t for t in tables if t in self._full]
        now = self._query_changes(full) if full else {}
        for t in tables:
            b = before.get(t, {})
            if t in self._full:
                a = now.get(t, {})
                moved = sorted(k for k in set(a) | set(b) if (k in a) != (k in b) or a.get(k) != b.get(k))
            else:
                moved = sorted(self._touched[t])
            if not moved:
                continue
            init = self.initial_rows(t, [k for k in moved if k not in b])
            self._set_rows(t, {k: (b[k] if k in b else init.get(k)) for k in moved})
        self._changes = {t: dict(rows) for t, rows in before.items()}

    def _run_sql(self, tool: ToolDef, arguments: dict[str, Any]) -> Any:
        changed = 0
        rows: list[dict[str, Any]] | None = None
        for stmt in tool.statements:
            cur = self._exec(stmt, arguments)
            desc = cur.description or []
            if _DML.match(stmt) and desc and desc[0][0] == "Count":
                changed += int(cur.fetchone()[0])
                rows = None
            else:
                cols = [d[0] for d in desc]
                rows = [dict(zip(cols, map(jsonable, r))) for r in cur.fetchall()]
                if _DML.match(stmt):
                    changed += len(rows)
        if tool.expect_rows is not None and changed != tool.expect_rows:
            raise WorldToolError(
                f"nothing changed: this request does not apply here (it would change {changed} rows, not {tool.expect_rows})"
            )
        if tool.returns == "none":
            return None
        if rows is None:
            return {"rows_changed": changed}
        if tool.returns == "one":
            if not rows:
                raise WorldToolError(tool.not_found)
            return rows[0]
        return rows

    def changes(self, tables: Iterable[str] | None = None) -> Changes:
        """From what :meth:`run` recorded after each call (no query): the state changes only there."""
        names = sorted(self.world.keys) if tables is None else sorted(tables)
        return {t: dict(self._changes.get(t, {})) for t in names}

    def _query_changes(self, tables: Iterable[str] | None = None) -> Changes:
        """The changes as the database holds them (two set-wise queries per table)."""
        out: Changes = {}
        for t in sorted(self.world.keys) if tables is None else sorted(tables):
            keycols = ", ".join(f'"{k}"' for k in self.world.keys[t])
            rows = self.world._rows(
                self._cur,
                t,
                f'SELECT * FROM (SELECT * FROM main."{t}" EXCEPT SELECT * FROM memory.main."{t}") ORDER BY {keycols}',
            )
            gone = self._cur.execute(
                f'SELECT {keycols} FROM (SELECT {keycols} FROM memory.main."{t}" '
                f'EXCEPT SELECT {keycols} FROM main."{t}") ORDER BY {keycols}'
            ).fetchall()
            cur: dict[str, dict[str, Any] | None] = {self.world.key_of(t, r): r for r in rows}
            for g in gone:
                cur[canonical_json([jsonable(x) for x in g])] = None
            out[t] = dict(sorted(cur.items()))
        return out

    def initial_rows(self, table: str, keys: list[str]) -> dict[str, dict[str, Any]]:
        return self.world.initial_rows(self._cur, table, keys)

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        return self.world._snapshot(self._cur, self._lane.name)

    def digest(self) -> str:
        return changes_digest(self.world.initial_digest, self._changes)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._cur.execute("ROLLBACK")
        finally:
            self.world._release(self._lane)

    def __enter__(self) -> DuckEpisodeState:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Rows:
    """A write's own RETURNING rows, without the key columns added to track it."""

    def __init__(self, description: list[Any], rows: list[tuple[Any, ...]]):
        self.description = description
        self.rows = rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self.rows)


class _Count:
    """The result of a tracked write, shaped like DuckDB's for a write without RETURNING."""

    description = [("Count",)]

    def __init__(self, n: int):
        self.n = n

    def fetchone(self) -> tuple[int]:
        return (self.n,)

    def fetchall(self) -> list[tuple[int]]:
        return [(self.n,)]


_READ_START = re.compile(r"^\s*(?:\(\s*)*(SELECT|FROM|VALUES|TABLE|DESCRIBE|SHOW|SUMMARIZE|EXPLAIN)\b", re.IGNORECASE)
_WITH_WRITE = re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)
_TRACKABLE = re.compile(
    r"^\s*(?:UPDATE|INSERT\s+(?:OR\s+\w+\s+)?INTO|DELETE\s+FROM)\s+\"?([A-Za-z_][A-Za-z0-9_]*)\"?(?=[\s(]|$)",
    re.IGNORECASE,
)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
_DELETE = re.compile(r"^\s*DELETE\b", re.IGNORECASE)


_UNSAFE = re.compile(
    r"^\s*(ATTACH|DETACH|USE|BEGIN|START|COMMIT|ROLLBACK|ABORT|END|CHECKPOINT|SET|RESET|PRAGMA|INSTALL|LOAD|"
    r"EXPORT|IMPORT|COPY|CALL|CREATE|DROP|ALTER|VACUUM|DETACH)\b",
    re.IGNORECASE,
)
_CATALOG = re.compile(r"(?<![\w\"])\"?(memory|lane\d+|system|temp)\"?\s*\.", re.IGNORECASE)


_ALLOWED = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "EXPLAIN"})
_PARSER: list[Any] = []  # one connection, used only to parse (DuckDB's own parser: comments, several statements)
_PARSER_LOCK = threading.Lock()


def _statement_types(sql: str) -> list[str] | None:
    """The types of the statements DuckDB reads in ``sql`` (None: it cannot parse it, so it
    cannot run it either; the bind check or the call reports that)."""
    import duckdb

    with _PARSER_LOCK:
        if not _PARSER:
            _PARSER.append(duckdb.connect(":memory:"))
        try:
            return [str(st.type).rsplit(".", 1)[-1] for st in _PARSER[0].extract_statements(sql)]
        except duckdb.Error:
            return None


@functools.lru_cache(maxsize=4096)  # a pure function of the text; a world runs the same few statements
def unsafe_statement(sql: str) -> str | None:
    """Why a tool may not run this statement (None: it may): one statement, a query or a DML
    write as DuckDB parses it (no transaction control, schema change, attachment or setting,
    even after a comment or another statement), and no other catalog than the episode's own
    (the initial state and the other episodes' lanes are out of reach)."""
    m = _UNSAFE.match(sql)
    if m:
        return f"{m.group(1).upper()} statements are not allowed in a tool"
    m = _CATALOG.search(sql)
    if m:
        return f"a tool names only the world's tables (not the catalog {m.group(1)!r})"
    types = _statement_types(sql)
    if types is not None and len(types) != 1:
        return f"a tool runs one statement per entry, not {len(types)} (a list of statements runs them in order)"
    if types and types[0] not in _ALLOWED:
        return f"{types[0]} statements are not allowed in a tool"
    return None


def _may_move_keys(sql: str, keycols: list[str]) -> bool:
    """Whether a tracked write may make a key vanish without returning it: an UPDATE whose SET
    names a key column, or an upsert. (INSERT and DELETE return exactly the keys they touch.)"""
    text = sql.lstrip()
    if re.search(r"\bON\s+CONFLICT\b", text, re.IGNORECASE):
        return True
    if not re.match(r"^UPDATE\b", text, re.IGNORECASE):
        return False
    m = re.search(r"\bSET\b(.*?)(?:\bWHERE\b|\bFROM\b|$)", text, re.IGNORECASE | re.DOTALL)
    target = m.group(1) if m else text
    return any(re.search(r'(?<![\w"])"?' + re.escape(k) + r'"?\s*=', target) for k in keycols)


def _statement_kind(sql: str) -> str:
    """``read`` for a query, ``write`` for anything else (a WITH that writes included)."""
    text = sql.lstrip()
    if _READ_START.match(text):
        return "read"
    if re.match(r"^WITH\b", text, re.IGNORECASE) and not _WITH_WRITE.search(text):
        return "read"
    return "write"


def _bindable(v: Any) -> Any:
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


def _duck_message(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]
