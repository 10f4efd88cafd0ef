"""Everything the rules look at, gathered once and tolerant of broken input.

Unlike :class:`groundeval.store.store.Store.open`, which stops at the first broken
file, the context reads every source it can: a manifest that does not validate
still yields its source paths, unreadable records are kept as findings, and the
DuckDB store is then built from the records that passed the shape checks through the
store's lenient loader (:class:`groundeval.store.lenient.StagedPack`: the same
ingestion and policy functions as the real loader), so later levels still see the
rest of the pack.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec
import yaml
from pydantic import ValidationError

from groundeval.contract.legacy import LegacyConfig
from groundeval.contract.manifest import (
    LEGACY_NAMES,
    PackPaths,
    ResolvedPack,
    find_manifest,
    legacy_to_native,
    read_manifest_yaml,
    resolve_source,
    yaml_line,
)
from groundeval.contract.models import Manifest
from groundeval.contract.outside import outside, refusal
from groundeval.errors import ContractError, Problem
from groundeval.gc_pause import collector_paused
from groundeval.store.digest import maybe_deep
from groundeval.store.lenient import StagedPack
from groundeval.store.store import Store


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def json_path(loc: tuple | list) -> str:
    """``("access", "roles", "a b", 0)`` -> ``$.access.roles["a b"][0]``."""
    out = "$"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(str(part)):
            out += f".{part}"
        else:
            out += "[" + json.dumps(str(part)) + "]"
    return out


CREATED_KEYS = ("timestamp", "created_at", "date")
_NOT_OBJECT = (False, None, None, None, None)


def _facts_of(data: Any) -> tuple:
    """(is an object, id, subsystem, timestamp value, (key, text) of the creation time) of one record."""
    if not isinstance(data, dict):
        return _NOT_OBJECT
    get = data.get
    ident, sub, ts = get("id"), get("subsystem"), get("timestamp")
    if type(ts) is str:  # the common case first (a str subclass cannot come out of json)
        created = ("timestamp", ts)
    else:
        created = next(((k, data[k]) for k in CREATED_KEYS[1:] if isinstance(get(k), str)), None)
    return (
        True,
        ident if isinstance(ident, str) else str(ident) if type(ident) is int else None,  # 1000 -> '1000'
        sub if isinstance(sub, str) else None,
        ts,
        created,
    )


_MSGSPEC_DECODE = msgspec.json.Decoder().decode


def loads(text: str) -> Any:
    """``json.loads(text)``, by msgspec (about twice as fast) wherever that gives the same
    value: a text msgspec refuses (NaN, infinities, lone surrogates, malformed JSON) or one
    that could nest near the recursion limit (the digest's guard) is parsed by ``json``,
    which also words the error. Same values and types (tested)."""
    if not maybe_deep(text):
        try:
            return _MSGSPEC_DECODE(text)
        except Exception:  # noqa: BLE001 - json decides, and words the error
            pass
    return json.loads(text)


@dataclass(slots=True)  # no __dict__ per record: ~200 bytes less each, a million records or more at scale
class Record:
    """One staged record: a JSONL/CSV/Parquet row or one artifact file.

    The parsed JSON is not kept: at a million records the parsed dicts were most of the
    verifier's memory. :attr:`parsed` parses on each call (the shape checks call it once per
    record), and the few facts later rules read (object or not, id, subsystem, timestamp,
    creation time) are kept from the first parse."""

    kind: str  # "event" | "artifact"
    file: str
    line: int | None
    text: str | None  # None once the shape checks released it (see parse_once)
    stem: str | None = None
    folder: str | None = None
    _facts: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def parsed(self) -> tuple[Any, str | None]:
        if self.text is None:
            raise RuntimeError(f"{self.file}:{self.line}: the record's text was released after its checks")
        try:
            data = loads(self.text)
        except (ValueError, RecursionError) as exc:
            self._facts = _NOT_OBJECT
            return None, str(exc)
        self._facts = _facts_of(data)
        return data, None

    def parse_once(self) -> tuple[Any, str | None]:
        """:attr:`parsed`, then the text is released: the facts later rules read are kept,
        and at a million records the texts are most of the verifier's memory."""
        out = self.parsed
        self.text = None
        return out

    def _known(self) -> tuple:
        if self._facts is None:
            self.parsed  # noqa: B018 - parsing records the facts
        return self._facts

    @property
    def data(self) -> Any:
        return self.parsed[0]

    @property
    def is_object(self) -> bool:
        return self._known()[0]

    @property
    def key(self) -> tuple[str, int | None]:
        return (self.file, self.line)

    @property
    def ident(self) -> str | None:
        """Event id, or artifact id (``id`` field, else the file stem)."""
        ident = self._known()[1]
        if ident is not None:
            return ident
        return self.stem if self.kind == "artifact" else None

    @property
    def subsystem(self) -> str | None:
        sub = self._known()[2]
        return sub if sub is not None else self.folder

    @property
    def timestamp(self) -> Any:
        """The record's ``timestamp`` value, whatever its type (``None`` when absent)."""
        return self._known()[3]

    @property
    def created(self) -> tuple[str, str] | None:
        """(key, text) of the creation time as the loader picks it: the first of
        ``timestamp``, ``created_at``, ``date`` holding a string."""
        return self._known()[4]


def _records(kind: str, staged: StagedPack, source: str) -> list[Record]:
    rows = getattr(staged, source)
    setattr(staged, source, [])
    rows.reverse()
    out = []
    pop, add = rows.pop, out.append
    while rows:
        r = pop()
        add(Record(kind, r.file, r.line, r.text, r.stem, r.folder))
    return out


class PackContext:
    """A pack as far as it can be read. Raises :class:`ContractError` only when there is no pack."""

    def __init__(
        self, pack: str | Path, store: Store | None = None, beside: Callable[[Store], Any] | None = None
    ) -> None:
        self.pack = Path(pack)
        self.offered = store  # a Store.open of the same pack, adopted when nothing was set aside
        self.shared_store = False
        self._artifact_ids: list[tuple[Record, str, bool]] | None = None  # see artifact_ids()
        self._ids_unique = True
        self.resolved_pack = pack if isinstance(pack, ResolvedPack) else None  # its manifest is read once
        self.manifest_path = find_manifest(pack).resolve()
        self.problems: list[tuple[str, Problem]] = []  # (rule id, problem) found while reading
        self.raw: dict[str, Any] | None = None
        self.node: yaml.Node | None = None
        self.legacy = False
        self.legacy_map: LegacyConfig | None = None  # how an original config.yaml was mapped
        self.manifest: Manifest | None = None
        self.manifest_errors: list[dict[str, Any]] = []
        self.timezone_ok = True
        self.events_path: Path | None = None
        self.artifacts_path: Path | None = None
        self.events: list[Record] = []
        self.artifacts: list[Record] = []
        self.bad: set[tuple[str, int | None]] = set()
        self.store: Store | None = None
        self.stats: dict[str, Any] = {}
        self.graph_error: str | None = None
        self.questions: Any = None  # the level 4 dry run's QuestionSet
        self.staged: StagedPack | None = None
        self.rows_from_store = False  # the records are the offered store's own staged rows
        self._beside: threading.Thread | None = None
        self._read_manifest()
        self._resolve_sources()
        self._stage()
        if beside is not None and store is not None:
            self._start_beside(beside, store)

    # ------------------------------------------------------------------ manifest

    @property
    def manifest_file(self) -> str:
        return str(self.manifest_path)

    def locate(self, loc: tuple | list) -> tuple[int | None, str]:
        """YAML line and JSON path of a native manifest location."""
        loc = tuple(loc)
        if self.legacy_map is not None:
            loc = self.legacy_map.legacy_loc(loc)
        return yaml_line(self.node, loc), json_path(loc)

    def _read_manifest(self) -> None:
        try:  # one parse, with the input limits (contract/limits.py) checked before anything is built
            if self.resolved_pack is not None:
                data, node = self.resolved_pack.manifest_yaml()
            else:
                data, node = read_manifest_yaml(self.manifest_path)
        except ContractError as exc:
            self.problems += [("GE101", p) for p in exc.problems]
            return
        self.node = node
        self.legacy = self.manifest_path.name in LEGACY_NAMES or ("access" not in data and "roles" in data)
        if self.legacy:
            self.legacy_map = legacy_to_native(data, default_name=self.manifest_path.parent.name)
            data = self.legacy_map.native
        self.raw = data
        try:
            self.manifest = Manifest.model_validate(data)
        except ValidationError as exc:
            self.manifest_errors = exc.errors()
        except (TypeError, ValueError, RecursionError) as exc:  # pragma: no cover - defensive
            self.manifest_errors = [{"loc": (), "msg": str(exc), "type": "value_error"}]
        if self.manifest is not None:
            try:
                ZoneInfo(self.manifest.timezone)
            except (ZoneInfoNotFoundError, ValueError, TypeError):
                self.timezone_ok = False

    @property
    def timezone(self) -> str:
        return self.manifest.timezone if self.manifest is not None and self.timezone_ok else "UTC"

    def _resolve_sources(self) -> None:
        sources: dict[str, Any] = {}
        if self.manifest is not None:
            sources = self.manifest.sources.model_dump()
        elif isinstance(self.raw, dict) and isinstance(self.raw.get("sources"), dict):
            sources = self.raw["sources"]
        root = self.manifest_path.parent
        for label, default in (("events", "events.jsonl"), ("artifacts", "artifacts")):
            rel = sources.get(label)
            rel = rel if isinstance(rel, str) and rel.strip() else default
            try:
                path = resolve_source(root, rel, default if self.legacy else None)
            except (OSError, ValueError):
                path = root / rel
            if not path.exists():
                line, _ = self.locate(("sources", label))
                self.problems.append(
                    (
                        "GE105",
                        Problem(
                            self.manifest_file, f"{label} source not found: {path}", line=line, field=f"sources.{label}"
                        ),
                    )
                )
                continue
            real = outside(path, root)
            if real is not None:  # never read: a pack reads only inside its folder
                line, _ = self.locate(("sources", label))
                message = refusal(f"the {label} source {rel!r}", real, root)
                self.problems.append(
                    ("GE108", Problem(self.manifest_file, message, line=line, field=f"sources.{label}"))
                )
                continue
            setattr(self, f"{label}_path", path)

    # ------------------------------------------------------------------ records

    def _stage(self) -> None:
        """Every record of the sources as raw text, through the store's lenient reader, or the
        rows the offered store was built from when it kept them (``Store.open(keep_rows=True)``)
        and reads the same sources: the same rows, without reading every file a second time."""
        with collector_paused():  # a row, then a record, per source record
            self._stage_rows()

    def _stage_rows(self) -> None:
        staged = StagedPack.from_store(self.offered) if self._same_sources(self.offered) else None
        self.rows_from_store = staged is not None
        self.staged = staged if staged is not None else StagedPack(self.events_path, self.artifacts_path)
        # The records take over the staged rows' texts; each row is released as its record is
        # made (the store is built from DuckDB's staging tables, not from these rows).
        self.events = _records("event", self.staged, "events")
        self.artifacts = _records("artifact", self.staged, "artifacts")
        rule = {"events": "GE115", "artifacts": "GE125"}
        self.problems += [(rule[source], p) for source, p in self.staged.problems]

    @property
    def con(self) -> Any:
        """The context's DuckDB connection (the staged records', later the store's)."""
        return self.staged.con

    @property
    def plain_cursor(self) -> Any:
        """A DuckDB connection for queries that read no table: for records taken from the offered
        store, that store's cursor, so no database of the context's own is opened for them
        (~10 ms and ~3 MB); else :attr:`con`."""
        if self.rows_from_store and self.offered is not None:
            return self.offered.cursor
        return self.con

    def mark_bad(self, record: Record) -> None:
        self.bad.add(record.key)

    def release(self, level: int) -> None:
        """Drop the records no check above ``level`` reads (their verdicts stay in :attr:`bad`):
        the events after level 1, the artifacts after level 2 (the store is built and the
        duplicate ids reported by then). A million records take ~0.3 GB."""
        if level >= 1:
            self.events = []
        if level >= 2:
            self.artifacts = []
            self._artifact_ids = None

    def artifact_ids(self, *, objects_only: bool = True) -> list[tuple[Record, str]]:
        """(record, id) of the artifacts not set aside, in order: those with an id (``rec.ident
        is not None``), or with ``objects_only`` those that are JSON objects with a non-empty id.
        Read after the shape checks (which set records aside), once."""
        if self._artifact_ids is None:
            bad = self.bad
            out = []
            with collector_paused():
                for rec in self.artifacts:
                    if bad and (rec.file, rec.line) in bad:
                        continue
                    facts = rec._known()
                    ident = facts[1] if facts[1] is not None else rec.stem
                    if ident is not None:
                        out.append((rec, ident, facts[0]))
            self._artifact_ids = out
            self._ids_unique = len({ident for _, ident, _ in out}) == len(out)
        if objects_only:
            return [(rec, ident) for rec, ident, obj in self._artifact_ids if obj and ident]
        return [(rec, ident) for rec, ident, _ in self._artifact_ids]

    def artifact_ids_repeat(self) -> bool:
        """Whether two artifacts of :meth:`artifact_ids` (objects or not) share an id."""
        if self._artifact_ids is None:
            self.artifact_ids()
        return not self._ids_unique

    # ------------------------------------------------------------------ store

    def build_store(self) -> list[Problem]:
        """Load the good records into DuckDB like the real loader; returns what it still rejected."""
        if self.staged is None or not self.staged.loadable:
            return []
        if self._can_adopt():
            self.store, self.shared_store = self.offered, True
            return []
        manifest = self.manifest or Manifest(name=self.manifest_path.parent.name or "pack")
        if not self.timezone_ok:
            manifest = manifest.model_copy(update={"timezone": "UTC"})
        # Shape-broken records, and every artifact after the first with its id, stay out of the store.
        drop = set(self.bad)
        seen: set[str] = set()
        for rec, ident in self.artifact_ids(objects_only=False) if self.artifact_ids_repeat() else ():
            if ident in seen:
                drop.add(rec.key)
            seen.add(ident)
        paths = PackPaths(manifest, self.manifest_path, self.events_path, self.artifacts_path, self.legacy)
        self.store, leftover = self.staged.load(manifest, paths, drop=drop)
        return leftover

    def _same_sources(self, store: Store | None) -> bool:
        """Whether ``store`` was loaded from this context's manifest and sources."""
        if store is None or store.paths is None or self.events_path is None or self.artifacts_path is None:
            return False
        same = [
            (store.paths.manifest_path, self.manifest_path),
            (store.paths.events_path, self.events_path),
            (store.paths.artifacts_path, self.artifacts_path),
        ]
        return all(Path(a).resolve() == Path(b).resolve() for a, b in same)

    def _can_adopt(self) -> bool:
        """Whether the offered store holds exactly what :meth:`build_store` would load:
        same manifest and unchanged sources, every record passed the shape checks, no duplicate ids."""
        store = self.offered
        if store is None or store.paths is None or self.manifest is None or not self.timezone_ok:
            return False
        if self.bad or self.problems or store.manifest != self.manifest:
            return False
        if not self._same_sources(store):
            return False
        # (nothing is set aside here, so every artifact with an id is listed)
        if len(self.artifact_ids(objects_only=False)) != len(self.artifacts) or self.artifact_ids_repeat():
            return False  # an artifact without an id, or two with one
        # Rows taken from the store are the records it holds; rows read again must come from unchanged files.
        return self.rows_from_store or store.sources_unchanged()

    def _start_beside(self, work: Callable[[Store], Any], store: Store) -> None:
        """Run ``work(store)`` in a thread while the checks run (``evaluate`` builds the runtime's
        search and fetch indexes this way: DuckDB work on the second core beside the checks'
        Python). It starts once the store's own connection is no longer read here (its kept
        rows are taken) and may leave the store's BM25 index half built until :meth:`settle`;
        a failure is dropped (the runtime builds what is missing itself, and reports it)."""

        def run() -> None:
            try:
                work(store)
            except Exception:  # noqa: BLE001 - see the docstring
                pass

        self._beside = threading.Thread(target=run, name="verifier-beside", daemon=True)
        self._beside.start()

    def settle(self) -> None:
        """Wait for the work started beside the checks: call before anything that ranks by BM25
        (it may read a half-built index) and before the store is handed back."""
        if self._beside is not None:
            self._beside.join()
            self._beside = None

    # ------------------------------------------------------------------ derived, cached

    @cached_property
    def _graphs(self) -> tuple[Any, Any] | None:
        """(the event graph, its :class:`~verifier.graph_facts.GraphFacts`), or ``None`` (with
        :attr:`graph_error`) when it cannot be built. The graph is the one generation builds
        (see :mod:`verifier.graph_facts`), without search spaces: ranking every silence
        record's query selectors is the costliest part of the graph, and the rules only ask
        whether a space is empty (see :func:`verifier.rules.semantics.empty_search_spaces`)."""
        if self.store is None or self.manifest is None:
            return None
        try:
            from .graph_facts import build
        except ImportError as exc:
            self.graph_error = f"groundeval.graph is not available ({exc})"
            return None
        self.settle()  # the graph's tables live on this thread's cursor, which loading the FTS extension replaces
        try:
            return build(self.store)
        except ContractError as exc:
            self.graph_error = f"the graph rejects the contract: {exc}"
        except Exception as exc:  # noqa: BLE001 - reported as a finding, never raised
            self.graph_error = f"building the graph failed: {type(exc).__name__}: {exc}"
        return None

    @property
    def graph(self) -> Any:
        """The event graph (issue 3) the dry run generates from, or ``None``."""
        return None if self._graphs is None else self._graphs[0]

    @property
    def graph_facts(self) -> Any:
        """What the level 3 rules read of the graph, or ``None`` when there is none."""
        return None if self._graphs is None else self._graphs[1]

    def close(self) -> None:
        """Close what the context opened; an adopted store stays open for its owner."""
        self.settle()
        if self.store is not None and self.shared_store and self.__dict__.get("_graphs") is not None:
            from groundeval.graph.sql import GraphSQL

            GraphSQL.drop_tables(self.store.cursor)  # the owner keeps the store, not the graph's tables
        if self.store is not None and not self.shared_store:
            self.store.close()
        elif self.staged is not None:
            self.staged.close()
