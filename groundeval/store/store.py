"""The DuckDB store: one loaded contract, typed tables, and the contract digest.

Tables (all ordered by their keys):

* ``events(id, type, ts TIMESTAMPTZ, raw JSON, src_file, src_line)``
* ``event_actors(event_id, pos, actor)`` · ``event_artifacts(event_id, key, pos, artifact_id)``
* ``artifacts(id, subsystem, created TIMESTAMPTZ, title, actors, restricted_inline, raw JSON, ...)``
* ``artifact_text(id, title, body)`` — the text fields searched by BM25
* ``artifact_visibility(artifact_id, kind 'actor'|'role', principal)``
* ``actors(actor, display_name, system)`` · ``actor_roles(actor, role, since, until)``
* ``roles(role, external, description)`` · ``grants(role, subsystem, since, until)``
* ``broadcasts(role, event_type)`` · ``meta(key, value)``

Open windows are stored as ``-infinity`` / ``infinity`` so SQL compares plainly. A store held in
memory keeps them in a compressed attached database (``catalog.py``); ``--db`` in a file.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import json
import os
import sys
import threading
from concurrent.futures import Future
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import duckdb

from ..contract.manifest import PackPaths, load_manifest
from ..contract.models import Manifest
from ..errors import ContractError
from .digest import (  # noqa: F401 - canonical_record: its old home
    BackgroundDigests,
    UnreadableRecord,
    canonical_record,
    records_digest,
)
from . import catalog
from .memory import release_freed_memory
from .ingest import KEPT_ARTIFACTS, KEPT_EVENTS, ingest, json_files

# DuckDB's Python client tries ``import pandas`` twice for every bound parameter; when
# pandas is not installed each failed import searches sys.path again (~0.13 ms per
# parameter). Recording the absence once makes those imports fail immediately.
if "pandas" not in sys.modules and importlib.util.find_spec("pandas") is None:
    sys.modules["pandas"] = None  # type: ignore[assignment]

SCHEMA_VERSION = "1"


def fts_extension_path() -> str:
    """The FTS extension file shipped by ``duckdb-extension-fts`` (no download at run time)."""
    import duckdb_extension_fts

    base = os.path.dirname(duckdb_extension_fts.__file__)
    found = sorted(glob.glob(os.path.join(base, "extensions", f"v{duckdb.__version__}", "*.duckdb_extension")))
    found = found or sorted(glob.glob(os.path.join(base, "extensions", "**", "fts.duckdb_extension"), recursive=True))
    if not found:
        raise RuntimeError("duckdb-extension-fts ships no extension for duckdb " + duckdb.__version__)
    return found[0]


def to_utc(us: int | None) -> datetime | None:
    """Epoch microseconds (as fetched from DuckDB) to an aware UTC datetime."""
    if us is None:
        return None
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=us)


def iso(dt: datetime | None) -> str | None:
    """Canonical text of a time in outputs: UTC, ``Z`` suffix, seconds precision unless finer."""
    if dt is None:
        return None
    dt = dt.astimezone(timezone.utc)
    text = dt.isoformat(timespec="microseconds" if dt.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def _ts_param(dt: datetime | None, tz: ZoneInfo) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=tz)
    return dt.astimezone(timezone.utc).isoformat()


def duckdb_config() -> dict[str, str]:
    """DuckDB settings for the store's connections: under an address-space limit (``ulimit -v``,
    common in containers and CI runners) DuckDB's memory limit is half of it, so it spills to
    disk instead of failing (its default, 80% of the machine's memory, ignores that limit)."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):  # no such limit on this platform
        return {}
    if limit in (resource.RLIM_INFINITY, -1) or limit <= 0:
        return {}
    return {"memory_limit": f"{max(limit // 2, 64 * 1024 * 1024) // (1024 * 1024)}MiB"}


def fingerprint(paths: PackPaths) -> str:
    """Cheap identity of the sources, to reuse a ``--db`` file without reloading: the manifest's
    bytes, then path, size and mtime of the events file and of the artifacts file or of each
    artifact file of a folder (every ``*.json`` file the loader reads, as
    :func:`~groundeval.store.ingest.json_files` finds them)."""
    h = _fingerprint_head(paths)
    for row in _stamp_rows(paths.artifacts_path):
        _stamp(h, *row)
    return h.hexdigest()


def _fingerprint_head(paths: PackPaths) -> Any:
    """The fingerprint's hash up to the artifacts: the manifest and the events file."""
    h = hashlib.sha256(paths.manifest_path.read_bytes())
    for row in _stamp_rows(paths.events_path):
        _stamp(h, *row)
    return h


def _stamp(h: Any, path: str, size: int, mtime_ns: int) -> None:
    h.update(f"{path}|{size}|{mtime_ns}\n".encode())


def _stamp_rows(p: Path) -> list[tuple[str, int, int]]:
    return _files_stat(str(p)) if p.is_dir() else [(str(p), *_size_mtime(p))]


def _size_mtime(p: Path) -> tuple[int, int]:
    st = p.stat()
    return st.st_size, st.st_mtime_ns


def _files_stat(root: str) -> list[tuple[str, int, int]]:
    """(path, size, mtime) of every ``*.json`` file under ``root`` that the loader reads, sorted."""
    out = []
    for f in json_files(Path(root)):
        st = os.stat(f)
        out.append((f, st.st_size, st.st_mtime_ns))
    return out


class Store:
    """A loaded contract in DuckDB. Use :meth:`open`; cursors are per thread."""

    def __init__(self, con: duckdb.DuckDBPyConnection, manifest: Manifest, paths: PackPaths | None):
        self.con = con
        self.manifest = manifest
        self.paths = paths
        self.tz = ZoneInfo(manifest.timezone)
        self._local = threading.local()
        self._fts_lock = threading.Lock()
        self._fts_ready = False
        self._kept_rows = False  # Store.open(keep_rows=True) left the staged rows for take_rows()

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, pack: str | Path, db: str | Path | None = None, *, keep_rows: bool = False) -> "Store":
        """Load a pack (folder or manifest file). With ``db``, reuse or create a database file.

        ``keep_rows`` (in memory only, without ``db``): keep the staged record rows until
        :meth:`take_rows`, for a verifier run on this store (it then checks the records
        this store was built from, without reading the sources again). Such a store records
        no fingerprint: :meth:`sources_unchanged` is false for it."""
        paths = load_manifest(pack)
        try:
            ZoneInfo(paths.manifest.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ContractError.single(
                str(paths.manifest_path), f"unknown timezone {paths.manifest.timezone!r}", field="timezone"
            ) from None
        # The fingerprint (size and mtime of every source file) serves --db reuse and the
        # verifier's check that the files did not change since this load; rows kept for the
        # verifier are the loaded records themselves, so that check is not needed. A load in
        # memory stamps a folder's files as it reads them (see _load: no second walk, which
        # cost 0.36 s CPU for 85K files).
        stamp = fingerprint(paths) if db is not None else ""
        if db is not None:
            db = Path(db)
            if db.exists():
                try:
                    con = duckdb.connect(str(db), config=duckdb_config())
                    row = con.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
                    if row and row[0] == stamp:
                        return cls(con, paths.manifest, paths)
                    con.close()
                except duckdb.Error:
                    pass
            tmp = db.with_name(db.name + f".tmp-{os.getpid()}")
            tmp.unlink(missing_ok=True)
            con = duckdb.connect(str(tmp), config=duckdb_config())
            try:
                cls._load(con, paths, stamp)
                con.execute("CHECKPOINT")
                con.close()
            except BaseException:
                con.close()
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, db)  # nothing half-written: the file appears only when complete
            return cls(duckdb.connect(str(db), config=duckdb_config()), paths.manifest, paths)
        con = duckdb.connect(config=duckdb_config())
        catalog.attach(con)
        cls._load(con, paths, None if not keep_rows else "", keep_rows=keep_rows)
        store = cls(con, paths.manifest, paths)
        store._kept_rows = keep_rows
        return store

    @classmethod
    def open_db(cls, db: str | Path) -> "Store":
        """Reopen a database file written by :meth:`open` without the pack."""
        con = duckdb.connect(str(db), read_only=True, config=duckdb_config())
        manifest = Manifest.model_validate_json(
            con.execute("SELECT value FROM meta WHERE key = 'manifest'").fetchone()[0]
        )
        return cls(con, manifest, None)

    @staticmethod
    def _load(con: duckdb.DuckDBPyConnection, paths: PackPaths, stamp: str | None, keep_rows: bool = False) -> None:
        """``stamp`` ``None``: the fingerprint of the files as this load reads them (the folder's
        files stamped as each is read, the other files before the load)."""
        m = paths.manifest
        con.execute("SET enable_progress_bar = false")
        con.execute("SET TimeZone = ?", [m.timezone])  # naive times take the pack's timezone
        head, seen = None, None
        if stamp is None and not paths.artifacts_path.is_dir():
            stamp = fingerprint(paths)
        elif stamp is None:  # each folder file is stamped as it is read: no second walk of its files
            head = _fingerprint_head(paths)

            def seen(path: str, st: os.stat_result) -> None:
                _stamp(head, path, st.st_size, st.st_mtime_ns)

        with BackgroundDigests(con) as digests:  # each table's digest beside the building of the next
            records: dict[str, Future[str]] = {}

            def built(table: str) -> None:
                records[table] = digests.submit(*RECORDS[table])

            ingest(con, paths.events_path, paths.artifacts_path, keep_rows=keep_rows, artifact_seen=seen, built=built)
            digests.build_done()
            if head is not None:
                stamp = head.hexdigest()
            finish_load(con, m, stamp, records)
        release_freed_memory(con)  # the staging's memory, before the tables are compressed
        if catalog.compress(con):
            release_freed_memory(con)  # the checkpoint's buffers and the tables as loaded

    def take_rows(self) -> tuple[duckdb.DuckDBPyConnection, str, str] | None:
        """The staged rows kept by ``Store.open(keep_rows=True)``, once: ``(connection,
        events table, artifacts table)``, temporary tables the caller reads and drops;
        ``None`` when none were kept (or they were taken or dropped)."""
        if not self._kept_rows:
            return None
        self._kept_rows = False
        return self.con, KEPT_EVENTS, KEPT_ARTIFACTS

    def drop_rows(self) -> None:
        """Release the kept staged rows, if any are still held (see :meth:`take_rows`)."""
        kept = self.take_rows()
        if kept is not None:
            for t in kept[1:]:
                self.con.execute(f"DROP TABLE IF EXISTS {t}")

    # ------------------------------------------------------------------ access

    @property
    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor for the calling thread (DuckDB connections are not shared across threads)."""
        cur = getattr(self._local, "cur", None)
        if cur is None:
            cur = self._local.cur = catalog.cursor(self.con)
            cur.execute("SET TimeZone = 'UTC'")
        return cur

    def query(self, sql: str, params: list[Any] | None = None) -> list[tuple]:
        return self.cursor.execute(sql, params or []).fetchall()

    def sources_unchanged(self) -> bool:
        """Whether the pack's files are what this store was loaded from (its ``--db``
        fingerprint; false for a store with no pack paths or none recorded)."""
        if self.paths is None:
            return False
        loaded = self.query("SELECT value FROM meta WHERE key = 'fingerprint'")
        return bool(loaded) and bool(loaded[0][0]) and loaded[0][0] == fingerprint(self.paths)

    @property
    def digest(self) -> str:
        return self.query("SELECT value FROM meta WHERE key = 'digest'")[0][0]

    def ensure_fts(self) -> None:
        """Build (once) the BM25 index over ``artifact_text``; loads the bundled extension."""
        if self._fts_ready:
            return
        with self._fts_lock:
            if self._fts_ready:
                return
            self.con.execute(f"LOAD '{fts_extension_path()}'")
            exists = self.con.execute(
                "SELECT count(*) FROM duckdb_schemas() WHERE schema_name = 'fts_main_artifact_text'"
            ).fetchone()[0]
            if not exists:
                # digits are kept as terms so identifiers (INC-42, PM-42) are searchable
                self.con.execute(
                    "PRAGMA create_fts_index('artifact_text', 'id', 'title', 'body',"
                    " stemmer = 'porter', stopwords = 'english', lower = 1, strip_accents = 1,"
                    " ignore = '(\\.|[^a-z0-9])+')"
                )
            self._fts_ready = True
            self._local = threading.local()  # cursors must see the loaded extension

    def event_record(self, event_id: str) -> dict[str, Any] | None:
        row = self.query("SELECT raw FROM events WHERE id = ?", [event_id])
        return json.loads(row[0][0]) if row else None

    def artifact_record(self, artifact_id: str) -> dict[str, Any] | None:
        row = self.query("SELECT raw FROM artifacts WHERE id = ?", [artifact_id])
        return json.loads(row[0][0]) if row else None

    def summary(self) -> dict[str, Any]:
        """Counts for ``groundeval info``; every list sorted."""
        q = self.query
        span = q("SELECT epoch_us(min(ts)), epoch_us(max(ts)) FROM events")[0]
        return {
            "name": self.manifest.name,
            "digest": self.digest,
            "timezone": self.manifest.timezone,
            "events": q("SELECT count(*) FROM events")[0][0],
            "artifacts": q("SELECT count(*) FROM artifacts")[0][0],
            "actors": q("SELECT count(*) FROM actors")[0][0],
            "roles": [r[0] for r in q("SELECT role FROM roles ORDER BY role")],
            "subsystems": [
                r[0] for r in q("SELECT subsystem FROM artifacts UNION SELECT subsystem FROM grants ORDER BY 1")
            ],
            "events_by_type": dict(q("SELECT type, count(*) FROM events GROUP BY type ORDER BY type")),
            "artifacts_by_subsystem": dict(
                q("SELECT subsystem, count(*) FROM artifacts GROUP BY subsystem ORDER BY subsystem")
            ),
            "start": iso(to_utc(span[0])),
            "end": iso(to_utc(span[1])),
            "references": self._reference_counts(),
        }

    def _reference_counts(self) -> dict[str, int]:
        """Events' ``artifact_ids`` values: how many name an artifact of the corpus, how many
        name none under a subsystem's key (dangling: the export lacks them), and how many name
        none under a key that is no subsystem (identifiers kept beside the references)."""
        row = self.query("""
            WITH subsystems AS (SELECT DISTINCT subsystem FROM artifacts)
            SELECT count(*) FILTER (WHERE a.id IS NOT NULL),
                   count(*) FILTER (WHERE a.id IS NULL AND s.subsystem IS NOT NULL),
                   count(*) FILTER (WHERE a.id IS NULL AND s.subsystem IS NULL)
            FROM event_artifacts ea
            LEFT JOIN artifacts a ON a.id = ea.artifact_id
            LEFT JOIN subsystems s ON s.subsystem = ea.key""")[0]
        return {"resolved": row[0], "dangling": row[1], "identifiers": row[2]}

    def close(self) -> None:
        self.con.close()


def finish_load(
    con: duckdb.DuckDBPyConnection, m: Manifest, fingerprint: str = "", records: dict[str, Future[str]] | None = None
) -> None:
    """Once the record tables exist: load the access policy, stamp the digest, write ``meta``.

    ``records``: the tables' digests (:data:`RECORDS`) being computed already, by table;
    the others are computed here. Shared by :meth:`Store.open` and the verifier, which
    builds the record tables from the records that passed its shape checks."""
    _load_policy(con, m)
    digest = _digest(con, m, records or {})
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE OR REPLACE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    _insert(
        con,
        "meta",
        ["?", "?"],
        [
            ["schema_version", SCHEMA_VERSION],
            ["digest", digest],
            ["fingerprint", fingerprint],
            ["manifest", m.model_dump_json()],
            ["name", m.name],
        ],
    )


def _insert(con: duckdb.DuckDBPyConnection, table: str, columns: list[str], rows: list[list[Any]]) -> None:
    """Insert ``rows`` in order with one statement (``executemany`` runs one per row: 1 ms each).
    ``columns``: each column's SQL with ``?`` for its values (e.g. ``?::TIMESTAMPTZ``)."""
    if not rows:
        return
    values = [list(col) for col in zip(*rows)]
    select = ", ".join(c.replace("?", f"unnest(${i + 1}::VARCHAR[])", 1) for i, c in enumerate(columns))
    con.execute(f"INSERT INTO {table} SELECT {select}", values)


def _load_policy(con: duckdb.DuckDBPyConnection, m: Manifest) -> None:
    tz = ZoneInfo(m.timezone)
    a = m.access
    con.execute("CREATE OR REPLACE TABLE actors (actor VARCHAR PRIMARY KEY, display_name VARCHAR, system BOOLEAN)")
    con.execute(
        "CREATE OR REPLACE TABLE actor_roles (actor VARCHAR, role VARCHAR, since TIMESTAMPTZ, until TIMESTAMPTZ)"
    )
    con.execute("CREATE OR REPLACE TABLE roles (role VARCHAR PRIMARY KEY, external BOOLEAN, description VARCHAR)")
    con.execute(
        "CREATE OR REPLACE TABLE grants (role VARCHAR, subsystem VARCHAR, since TIMESTAMPTZ, until TIMESTAMPTZ)"
    )
    con.execute("CREATE OR REPLACE TABLE broadcasts (role VARCHAR, event_type VARCHAR)")
    con.execute("CREATE OR REPLACE TABLE artifact_visibility (artifact_id VARCHAR, kind VARCHAR, principal VARCHAR)")
    lo, hi = "-infinity", "infinity"
    window = ["?", "?", "?::TIMESTAMPTZ", "?::TIMESTAMPTZ"]
    _insert(
        con,
        "actors",
        ["?", "?", "?::BOOLEAN"],
        [[k, v.display_name, v.system] for k, v in sorted(a.actors.items())],
    )
    _insert(
        con,
        "actor_roles",
        window,
        [
            [k, w.role, _ts_param(w.since, tz) or lo, _ts_param(w.until, tz) or hi]
            for k, v in sorted(a.actors.items())
            for w in v.roles
        ],
    )
    _insert(
        con,
        "roles",
        ["?", "?::BOOLEAN", "?"],
        [[k, v.external, v.description] for k, v in sorted(a.roles.items())],
    )
    grants = [
        [r, g.name, _ts_param(g.since, tz) or lo, _ts_param(g.until, tz) or hi]
        for r, v in sorted(a.roles.items())
        for g in v.subsystems
    ]
    _insert(con, "grants", window, grants)
    bc = sorted({(r, t) for r, v in a.roles.items() for t in v.broadcast_event_types})
    _insert(con, "broadcasts", ["?", "?"], [list(x) for x in bc])
    vis = sorted(
        {(aid, "actor", p) for aid, v in a.restrictions.items() for p in v.actors}
        | {(aid, "role", p) for aid, v in a.restrictions.items() for p in v.roles}
    )
    _insert(con, "artifact_visibility", ["?", "?", "?"], [list(x) for x in vis])
    con.execute("""INSERT INTO artifact_visibility
                   SELECT id, 'actor', unnest(coalesce(json_extract_string(raw, '$.visibility.actors[*]'), []))
                   FROM artifacts WHERE restricted_inline
                   UNION ALL
                   SELECT id, 'role', unnest(coalesce(json_extract_string(raw, '$.visibility.roles[*]'), []))
                   FROM artifacts WHERE restricted_inline""")
    # An artifact is restricted when any restriction names it, even one listing nobody.
    con.execute("ALTER TABLE artifacts ADD COLUMN restricted BOOLEAN")
    con.execute(
        "UPDATE artifacts SET restricted = restricted_inline OR id IN (SELECT unnest(?::VARCHAR[]))",
        [sorted(a.restrictions)],
    )
    con.execute(
        "CREATE OR REPLACE TABLE artifact_visibility AS SELECT DISTINCT * FROM artifact_visibility"
        " ORDER BY artifact_id, kind, principal"
    )


# The records of each table the digest covers: (*prefix, text) rows and the keys the prefix replaces.
RECORDS = {
    "events": ("SELECT raw::VARCHAR FROM events", ()),
    "artifacts": ("SELECT id, subsystem, raw::VARCHAR FROM artifacts", ("id", "subsystem")),
}


def _digest(con: duckdb.DuckDBPyConnection, m: Manifest, records: dict[str, Future[str]]) -> str:
    """sha256 over the evaluated content, independent of file and record order and of the
    key order inside records.

    Covers timezone, access policy, evaluation config and every event and artifact
    record, each as canonical JSON (:func:`~groundeval.store.digest.canonical_record`: sorted keys, compact,
    normalised numbers); an artifact's id and subsystem count once, whether they come
    from fields or from its file path. Source locations, names and adapter settings are
    excluded: the same data in another layout has the same digest.
    """
    manifest_part = json.dumps(
        m.model_dump(mode="json", include={"timezone", "access", "evaluation"}), sort_keys=True, separators=(",", ":")
    )
    ev, art = (_table_digest(con, t, records.get(t)) for t in ("events", "artifacts"))
    return hashlib.sha256(f"{manifest_part}\n{ev}\n{art}".encode()).hexdigest()


def _table_digest(con: duckdb.DuckDBPyConnection, table: str, computing: Future[str] | None) -> str:
    """One table's records digest (the one ``computing`` already, if any); a record it cannot
    read is a located problem, worded as the verifier's GE111."""
    try:
        return computing.result() if computing is not None else records_digest(con, *RECORDS[table])
    except UnreadableRecord as exc:
        row = con.execute(
            f"SELECT src_file, src_line FROM {table} WHERE raw::VARCHAR = ? ORDER BY ALL LIMIT 1", [exc.text]
        ).fetchone()
        file, line = row or (table, None)
        raise ContractError.single(file, f"malformed JSON: {exc}", line=line) from None
