"""The lenient loader: read a pack's records as far as they can be read, then build the
store from those that pass, collecting every problem instead of stopping at the first.

:meth:`Store.open` stops at the first broken file. The verifier wants the opposite: every
readable record (to check its shape), then a store of the good ones (so later levels see
the rest of the pack). :class:`StagedPack` is the first half — each source read as raw
text rows, reading problems collected — and :meth:`StagedPack.load` the second: rows the
caller sets aside and rows the loader's own validation rejects stay out, the tables, the
policy and the digest are built exactly as :meth:`Store.open` builds them.

:func:`load` does both for a pack: ``load(pack) -> (store, problems)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..contract.manifest import PackPaths, load_manifest
from ..contract.models import Manifest
from ..errors import ContractError, Problem
from . import ingest
from .memory import release_freed_memory
from .store import Store, finish_load

__all__ = ["StagedPack", "StagedRow", "load"]

STAGES = {"events": "ev_stage", "artifacts": "art_stage"}
RETRIES = 5  # validation rounds: each drops the rows the previous one rejected


@dataclass(slots=True)  # no __dict__ per row: millions of them at scale; not frozen: a frozen init costs twice as much
class StagedRow:
    """One raw record: a JSONL/CSV/Parquet row or one artifact file (``stem`` and ``folder``
    for files: the id and subsystem they default to)."""

    file: str
    line: int | None
    text: str
    stem: str | None = None
    folder: str | None = None

    @property
    def key(self) -> tuple[str, int | None]:
        return (self.file, self.line)


def _fetch_rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[StagedRow]:
    cur = con.execute(sql)
    rows: list[StagedRow] = []
    while batch := cur.fetchmany(65536):  # never every row twice (tuples and StagedRows) at once
        rows += [StagedRow(*r) for r in batch]
    return rows


def _source_order(row: StagedRow) -> tuple:
    """``ORDER BY file, line`` as DuckDB sorts it (texts by code point, a missing line last)."""
    return (row.file, row.line is None, row.line or 0)


def _fetch_kept(con: duckdb.DuckDBPyConnection, sql: str) -> list[StagedRow]:
    """A kept table's rows in source order: streamed as stored (the staging wrote them in that
    order, so the sort here is one pass) rather than sorted by DuckDB, which held every text a
    second time (~25 MB at 22.5K events and 19K artifacts); what the scan used is handed back."""
    rows = _fetch_rows(con, sql)
    rows.sort(key=_source_order)
    release_freed_memory(con)
    return rows


class StagedPack:
    """A pack's sources read as raw rows, not validated. ``problems`` holds what could not be
    read, as ``(source, problem)`` with source ``"events"`` or ``"artifacts"``; a source that
    could not be read at all has no rows and :attr:`loadable` is false."""

    def __init__(self, events_path: Path | None, artifacts_path: Path | None):
        self._con: duckdb.DuckDBPyConnection | None = None
        self.events_path, self.artifacts_path = events_path, artifacts_path
        self.events: list[StagedRow] = []
        self.artifacts: list[StagedRow] = []
        self.problems: list[tuple[str, Problem]] = []
        self._staged: set[str] = set()
        self._restage = False  # rows taken from a store: load() reads the sources into this connection first
        if events_path is not None:
            self._stage(
                "events", events_path, ingest.stage_events, "SELECT file, line, text FROM ev_stage ORDER BY file, line"
            )
        if artifacts_path is not None:
            self._stage(
                "artifacts",
                artifacts_path,
                ingest.stage_artifacts,
                "SELECT file, line, text, stem, folder FROM art_stage ORDER BY file, line",
            )

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """This pack's own DuckDB database, made when first needed: rows taken from a store may
        never need one (a database costs ~10 ms and ~3 MB)."""
        if self._con is None:
            self._con = duckdb.connect()
            self._con.execute("SET enable_progress_bar = false")
        return self._con

    @classmethod
    def from_store(cls, store: Store) -> StagedPack | None:
        """The rows a :meth:`Store.open` with ``keep_rows=True`` staged (read from its sources
        with the same staging functions, so the same rows, and none unreadable: that open
        succeeded), instead of reading every source again; ``None`` when the store kept none.

        :meth:`load` on such a pack stages the sources again (the store's connection is
        not this pack's)."""
        kept = store.take_rows()
        if kept is None or store.paths is None:
            return None
        con, ev_table, art_table = kept
        self = cls(None, None)
        self.events_path, self.artifacts_path = store.paths.events_path, store.paths.artifacts_path
        try:
            self.events = _fetch_kept(con, f"SELECT file, line, text FROM {ev_table}")
            con.execute(f"DROP TABLE {ev_table}")  # one copy of the text at a time
            self.artifacts = _fetch_kept(con, f"SELECT file, line, text, stem, folder FROM {art_table}")
        finally:
            for t in (ev_table, art_table):
                con.execute(f"DROP TABLE IF EXISTS {t}")
        self._staged = set(STAGES)
        self._restage = True
        return self

    def _stage(self, source: str, path: Path, stage, rows_sql: str) -> None:
        try:
            stage(self.con, path)
            rows = _fetch_rows(self.con, rows_sql)
        except ContractError as exc:
            self.problems += [(source, p) for p in exc.problems]
            return
        except duckdb.Error as exc:
            self.problems.append((source, Problem(str(path), f"cannot read {source}: {str(exc).splitlines()[0]}")))
            return
        setattr(self, source, rows)
        self._staged.add(source)

    @property
    def loadable(self) -> bool:
        """Both sources were read (possibly with broken records among them)."""
        return self._staged == set(STAGES)

    def load(
        self, manifest: Manifest, paths: PackPaths | None, *, drop: Iterable[tuple[str, int | None]] = ()
    ) -> tuple[Store, list[Problem]]:
        """Build the store from the staged rows minus ``drop`` (``(file, line)`` keys) and
        minus the rows the loader's validation rejects; returns the store and those
        rejections. The staged rows are consumed: call once."""
        if not self.loadable:
            raise ValueError("the pack's sources were not both read; see .problems")
        con = self.con
        if self._restage:  # the rows came from a store: its sources, staged here as they were there
            self._restage = False
            ingest.stage_events(con, self.events_path)
            ingest.stage_artifacts(con, self.artifacts_path)
        con.execute("SET TimeZone = ?", [manifest.timezone])  # naive times take the pack's timezone
        con.execute("CREATE OR REPLACE TEMP TABLE _bad (file VARCHAR, line INTEGER)")
        drop = sorted(set(drop), key=lambda k: (k[0], k[1] or 0))
        if drop:
            con.executemany("INSERT INTO _bad VALUES (?, ?)", drop)
        for t in STAGES.values():
            con.execute(
                f"DELETE FROM {t} WHERE EXISTS (SELECT 1 FROM _bad b WHERE b.file = {t}.file"
                f" AND b.line IS NOT DISTINCT FROM {t}.line)"
            )
        rejected = self._validate()
        ingest.build_tables(con)
        finish_load(con, manifest)
        return Store(con, manifest, paths), rejected

    def _validate(self) -> list[Problem]:
        """The loader's own validation as a safety net: rows it still rejects are dropped and
        returned. (Validation consumes the staging tables, so each retry restages from a copy.)"""
        con = self.con
        for t in STAGES.values():
            con.execute(f"CREATE OR REPLACE TEMP TABLE _keep_{t} AS SELECT * FROM {t}")
        rejected: list[Problem] = []
        for attempt in range(RETRIES):
            if attempt:
                for t in STAGES.values():
                    con.execute(f"CREATE OR REPLACE TEMP TABLE {t} AS SELECT * FROM _keep_{t}")
            problems = ingest.validate_events(con) + ingest.validate_artifacts(con)
            if not problems:
                break
            rejected += problems
            for p in problems:
                for t in STAGES.values():
                    con.execute(
                        f"DELETE FROM _keep_{t} WHERE file = ? AND line IS NOT DISTINCT FROM ?", [p.file, p.line]
                    )
        for t in STAGES.values():
            con.execute(f"DROP TABLE IF EXISTS _keep_{t}")
        return rejected

    def close(self) -> None:
        if self._con is not None:
            self._con.close()


def load(pack: str | Path, *, collect: bool = True) -> tuple[Store | None, list[Problem]]:
    """Load a pack. With ``collect`` (the default) nothing is raised for bad records: the store
    holds the records that load and the problems list the rest (``(None, problems)`` when
    the manifest or a whole source cannot be read). Without it, this is :meth:`Store.open`:
    the first problem raises :class:`ContractError`."""
    if not collect:
        return Store.open(pack), []
    try:
        paths = load_manifest(pack)
    except ContractError as exc:
        return None, list(exc.problems)
    staged = StagedPack(paths.events_path, paths.artifacts_path)
    problems = [p for _, p in staged.problems]
    if not staged.loadable:
        staged.close()
        return None, problems
    try:
        store, rejected = staged.load(paths.manifest, paths)
    except BaseException:
        staged.close()
        raise
    return store, problems + rejected
