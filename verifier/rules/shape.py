"""Level 1 — shape: every file against the JSON Schemas in ``contracts/``.

The schemas describe the manifest's shorthands too, so the manifest is checked as
written (YAML dates read as ISO text). Records are checked one by one and broken
ones are set aside, so one bad line never hides the rest.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

import groundeval
from groundeval.contract import schemas
from groundeval.contract.manifest import key_line, yaml_line
from groundeval.errors import GroundevalError
from groundeval.gc_pause import collector_frozen

from .. import sql
from ..context import PackContext, Record, json_path
from .registry import check, define, finding
from .screen import screened

MAX_MESSAGE = 300

define(
    "GE101",
    "shape",
    1,
    "error",
    "manifest unreadable",
    "Nothing can be evaluated without a manifest that parses as a YAML mapping.",
    "Fix the YAML syntax at the reported line; the top level must be a mapping.",
)
define(
    "GE102",
    "shape",
    1,
    "error",
    "manifest does not match the schema",
    "Keys and values outside contracts/manifest.schema.json are typos or unsupported settings.",
    "Rename or remove the key, or give the value the type the schema expects.",
)
define(
    "GE103",
    "shape",
    1,
    "error",
    "manifest constraint violated",
    "Some rules span several fields (weights summing to 1, one template per selector).",
    "Adjust the fields named in the message so the constraint holds.",
)
define(
    "GE104",
    "shape",
    1,
    "error",
    "unknown timezone",
    "Naive timestamps are read in the pack's timezone; an unknown name makes every such time wrong.",
    "Use an IANA timezone name such as UTC or Europe/Berlin.",
)
define(
    "GE105",
    "shape",
    1,
    "error",
    "source not found",
    "The events or artifacts path in `sources` does not exist, so that half of the pack is missing.",
    "Point sources.events / sources.artifacts at existing paths, relative to the manifest.",
)
define(
    "GE106",
    "shape",
    1,
    "warning",
    "unknown key in an original config.yaml",
    "The original GroundEval format has no such key (often a typo); it is ignored rather than failing the load.",
    "Fix the key's spelling (see docs/formats.md for the original keys), or remove it.",
)
define(
    "GE107",
    "shape",
    1,
    "warning",
    "original setting not honoured",
    "A key of the original GroundEval format that groundeval cannot honour; the pack loads without it.",
    "Remove the key, or express the setting as docs/formats.md says (native groundeval.yaml or CLI option).",
)
define(
    "GE108",
    "shape",
    1,
    "error",
    "source outside the pack",
    "A pack reads only inside its own folder: a source path with `..`, an absolute one or a symlink resolving "
    "elsewhere would serve files of the machine to the agents; it is not read.",
    "Move the file into the pack's folder, or allow that path on the command line: "
    "groundeval --allow-outside PATH <command> ...",
)
define(
    "GE110",
    "shape",
    1,
    "error",
    "event does not match the schema",
    "Events must carry id, type and timestamp with the types of contracts/event.schema.json.",
    "Give the record the field with the expected type (see the JSON path).",
)
define(
    "GE111",
    "shape",
    1,
    "error",
    "event line is not a JSON object",
    "A line that is not a JSON object cannot be an event.",
    "Write one JSON object per line (JSONL); remove stray text or trailing commas.",
)
define(
    "GE112",
    "shape",
    1,
    "error",
    "empty event id",
    "Questions, traces and causal links refer to events by id.",
    "Give every event a non-empty, unique id.",
)
define(
    "GE113",
    "shape",
    1,
    "error",
    "unparseable timestamp",
    "Every gate compares times; a time that does not parse makes the record unusable.",
    "Use ISO 8601, e.g. 2026-03-01T09:00:00Z (naive times take the pack timezone).",
)
define(
    "GE114",
    "shape",
    1,
    "error",
    "duplicate event id",
    "Two events with one id make causal links and citations ambiguous.",
    "Give each event a unique id.",
)
define(
    "GE115",
    "shape",
    1,
    "error",
    "events source unreadable",
    "The events file could not be read at all (format or encoding).",
    "Use JSONL, CSV with a header row, or Parquet, encoded as UTF-8.",
)
define(
    "GE116",
    "shape",
    1,
    "error",
    "empty event log",
    "Without events there is nothing to derive questions from.",
    "Point sources.events at a log with at least one event.",
)
define(
    "GE119",
    "shape",
    1,
    "error",
    "record rejected by the loader",
    "The store loader refuses this record for a reason the schema does not express.",
    "Fix the record as the message says; `groundeval info PACK` shows the loader's view.",
)
define(
    "GE120",
    "shape",
    1,
    "error",
    "artifact does not match the schema",
    "Artifacts must follow contracts/artifact.schema.json (string id, subsystem, title, times).",
    "Give the field the expected type (see the JSON path).",
)
define(
    "GE121",
    "shape",
    1,
    "error",
    "artifact is not a JSON object",
    "An artifact file or line must be one JSON object.",
    "Write the artifact as a JSON object; check for syntax errors at the reported position.",
)
define(
    "GE122",
    "shape",
    1,
    "error",
    "artifact lacks id or subsystem",
    "An artifact needs an id (field or file name) and a subsystem (field or parent folder).",
    "Add `id`/`subsystem` fields, or use the artifacts/<subsystem>/<id>.json layout.",
)
define(
    "GE123",
    "shape",
    1,
    "error",
    "unparseable artifact creation time",
    "The horizon gate compares creation times; one that does not parse hides the artifact.",
    "Use ISO 8601 in timestamp / created_at / date, e.g. 2026-03-01T09:00:00Z.",
)
define(
    "GE125",
    "shape",
    1,
    "error",
    "artifacts source unreadable",
    "The artifacts folder or file could not be read.",
    "Use a folder of <subsystem>/<id>.json files or one JSONL file, encoded as UTF-8.",
)


# --------------------------------------------------------------------------- schemas


@lru_cache(maxsize=None)
def validator(name: str) -> Draft202012Validator:
    """Validator for a checked-in schema (``contracts/<name>.schema.json``), else the generated one."""
    path = Path(groundeval.__file__).resolve().parent.parent / "contracts" / f"{name}.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else schemas.schema_for(name)
    return Draft202012Validator(schema)


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


# Keywords whose outcome depends only on a value's JSON type and an object's keys. When a schema
# uses nothing else, records with one structure share one verdict, so valid structures are cached.
_STRUCTURAL = {
    "$defs",
    "$id",
    "$ref",
    "$schema",
    "additionalProperties",
    "anyOf",
    "default",
    "description",
    "format",
    "items",
    "properties",
    "required",
    "title",
    "type",
}


def _keywords(node: Any, under_properties: bool = False) -> set[str]:
    out: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if not under_properties:
                out.add(k)
            out |= _keywords(v, k in ("properties", "$defs"))
    elif isinstance(node, list):
        for v in node:
            out |= _keywords(v)
    return out


def _structure(value: Any) -> Any:
    """A hashable description of a JSON value's types and keys (not its strings or numbers)."""
    if isinstance(value, dict):
        return ("o", tuple(sorted((k, _structure(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("a", tuple(sorted({_structure(v) for v in value}, key=repr)))
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return "i"
    return type(value).__name__


class _Absent:
    """The type of a property a record does not have."""


_ABSENT = _Absent()
_ANNOTATIONS = {"$id", "$schema", "$defs", "title", "description", "default", "format"}
# "integer" looks at a float's value too (1.0 is one, 1.5 is not): its key part says which (see _inline)
_TYPES = {"string", "number", "integer", "boolean", "null", "array", "object"}


class _Unsupported(GroundevalError):
    """A schema keyword the verdict key does not cover (its verdicts are then not cached)."""


def _resolve(root: dict[str, Any], node: Any) -> Any:
    for _ in range(16):
        if not (isinstance(node, dict) and "$ref" in node):
            return node
        ref = node["$ref"]
        if set(node) - _ANNOTATIONS - {"$ref"} or not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise _Unsupported(ref)
        node = root.get("$defs", {}).get(ref[len("#/$defs/") :])
    raise _Unsupported("$ref chain")


def _node(root: dict[str, Any], node: Any) -> dict[str, Any] | None:
    """The schema node with its keywords checked; ``None`` when it accepts anything."""
    node = _resolve(root, node)
    if node is True or node == {}:
        return None
    if not isinstance(node, dict) or set(node) - _STRUCTURAL:
        raise _Unsupported(node)
    types = node.get("type", [])
    if any(t not in _TYPES for t in (types if isinstance(types, list) else [types])):
        raise _Unsupported(types)
    if not isinstance(node.get("properties", {}), dict) or isinstance(node.get("items"), list):
        raise _Unsupported(node)
    return node


class _KeyWriter:
    """Writes the Python source of a schema's verdict key (see :func:`_structure_key`)."""

    def __init__(self, root: dict[str, Any]):
        self.root, self.lines, self.consts, self.count = root, [], {}, 0

    def const(self, value: Any) -> str:
        name = f"C{len(self.consts)}"
        self.consts[name] = value
        return name

    def key(self, node: Any, depth: int = 0) -> str | None:
        """Name of a function of a value whose result is equal for two values only if ``node``
        gives them the same verdict; ``"type"`` when only the value's type matters, ``None``
        when the node accepts anything."""
        node = _node(self.root, node)
        if node is None:
            return None
        body: list[str] = []
        parts: list[str] = []
        self._inline(node, "x", "t0", body, parts, depth)
        if not parts:
            return "type"
        self.count += 1
        name = f"k{self.count}"
        self.lines += [f"def {name}(x):", "    t0 = type(x)", *body, f"    return (t0, {', '.join(parts)})", ""]
        return name

    def _var(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def _inline(self, node: dict, var: str, tvar: str, body: list[str], parts: list[str], depth: int) -> None:
        """Lines computing, into new locals named in ``parts``, what ``node`` looks at in the
        value ``var`` (of type ``tvar``) besides its type: the value and type of each named
        property (nested in the same function), a function per element of a list or value
        of a mapping, every ``anyOf`` alternative."""
        if depth > 32:
            raise _Unsupported("depth")
        props, required = node.get("properties", {}), node.get("required", [])
        extra = node.get("additionalProperties", True)
        types = node.get("type", [])
        if "integer" in (types if isinstance(types, list) else [types]):
            i = self._var("i")
            body.append(f"    {i} = {var}.is_integer() if {tvar} is float else None")
            parts.append(i)
        for n in sorted(set(props) | set(required)):
            v, tv = self._var("v"), self._var("t")
            body += [f"    {v} = {var}.get({n!r}, ABSENT) if {tvar} is dict else ABSENT", f"    {tv} = type({v})"]
            parts.append(tv)
            sub = _node(self.root, props.get(n, True))
            if sub is not None:
                self._inline(sub, v, tv, body, parts, depth + 1)
        if extra is False:
            e = self._var("e")
            body.append(
                f"    {e} = any(k not in {self.const(frozenset(props))} for k in {var}) if {tvar} is dict else None"
            )
            parts.append(e)
        elif extra is not True:
            if props:
                raise _Unsupported("properties with an additionalProperties schema")
            each = self.key(extra, depth + 1)
            if each is not None:
                o = self._var("o")
                body.append(f"    {o} = frozenset(map({each}, {var}.values())) if {tvar} is dict else None")
                parts.append(o)
        if "items" in node:
            each = self.key(node["items"], depth + 1)
            if each is not None:
                a = self._var("a")
                body.append(f"    {a} = frozenset(map({each}, {var})) if {tvar} is list else None")
                parts.append(a)
        for alt in node.get("anyOf", []):
            sub = _node(self.root, alt)
            if sub is not None:
                self._inline(sub, var, tvar, body, parts, depth + 1)


@lru_cache(maxsize=None)
def _structure_key(name: str) -> Any:
    """The verdict key of schema ``name`` (see :func:`_key_of`), or ``None`` when the schema
    uses a keyword that looks at more than types and keys."""
    schema = validator(name).schema
    writer = _KeyWriter(schema)
    try:
        top = writer.key(schema)
    except _Unsupported:
        return None
    if top is None or top == "type":
        return type
    scope: dict[str, Any] = {"ABSENT": _ABSENT, **writer.consts}
    exec(compile("\n".join(writer.lines), f"<verdict key of {name}>", "exec"), scope)  # noqa: S102 - our own source
    return scope[top]


_VALID_STRUCTURES: dict[str, set] = {}


def verdict_cache(name: str) -> tuple[Any, set] | None:
    """``(key function, keys known valid)`` of schema ``name``, or ``None`` when its verdicts are
    not cached (a schema that looks at more than types and keys). A loop over records tests
    ``key(instance) in valid`` itself and calls :func:`schema_errors` only on a miss."""
    cache = _VALID_STRUCTURES.get(name)
    if cache is None:
        structural = _keywords(validator(name).schema) <= _STRUCTURAL and _structure_key(name) is not None
        if not structural:
            return None
        cache = _VALID_STRUCTURES[name] = set()
    return _structure_key(name), cache


def schema_errors(name: str, instance: Any) -> list[tuple[tuple, str]]:
    """(location, message) of every schema violation, sorted."""
    known = verdict_cache(name)
    cache = known[1] if known is not None else None
    key = known[0](instance) if known is not None else None
    if key is not None and key in cache:
        return []
    out = []
    for err in validator(name).iter_errors(instance):
        if err.context:  # anyOf/oneOf: name the alternative that came closest
            err = best_match(err.context) or err
        out.append((tuple(err.absolute_path), _short(err.message)))
    if not out and key is not None:
        cache.add(key)
    return sorted(out, key=lambda e: (json_path(e[0]), e[1]))


def jsonable(value: Any) -> Any:
    """YAML values as JSON would hold them (dates become ISO text, keys text)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


# --------------------------------------------------------------------------- checks


@check("GE101", "GE105", "GE108", "GE115", "GE125")
def reading_problems(ctx: PackContext) -> Iterable:
    """Problems met while reading files at all."""
    for rule_id, p in ctx.problems:
        yield finding(
            rule_id, p.message, file=p.file, line=p.line, path=json_path(p.field.split(".")) if p.field else None
        )


def _prefix(a: tuple, b: tuple) -> bool:
    n = min(len(a), len(b))
    return tuple(map(str, a[:n])) == tuple(map(str, b[:n]))


@check("GE102", "GE103", "GE104", "GE106", "GE107")
def manifest_shape(ctx: PackContext) -> Iterable:
    if ctx.raw is None:
        return
    seen: list[tuple] = []
    if ctx.legacy_map is not None:
        for loc, msg in ctx.legacy_map.errors:
            yield finding("GE102", msg, file=ctx.manifest_file, line=yaml_line(ctx.node, loc), path=json_path(loc))
        for note in ctx.legacy_map.notes:
            yield finding(
                "GE107" if note.known else "GE106",
                note.message,
                file=ctx.manifest_file,
                line=key_line(ctx.node, note.loc),
                path=json_path(note.loc),
            )
    for loc, msg in schema_errors("manifest", jsonable(ctx.raw)):
        line, path = ctx.locate(loc)
        seen.append(loc)
        yield finding("GE102", msg, file=ctx.manifest_file, line=line, path=path)
    for err in ctx.manifest_errors:
        loc = tuple(p for p in err.get("loc", ()) if not (isinstance(p, str) and p.startswith("function-")))
        if any(_prefix(loc, s) for s in seen):
            continue
        line, path = ctx.locate(loc)
        yield finding(
            "GE103", _short(str(err.get("msg", "invalid value"))), file=ctx.manifest_file, line=line, path=path
        )
    if ctx.manifest is not None and not ctx.timezone_ok:
        line, path = ctx.locate(("timezone",))
        yield finding(
            "GE104", f"unknown timezone {ctx.manifest.timezone!r}", file=ctx.manifest_file, line=line, path=path
        )


def unparseable_times(ctx: PackContext, texts: Iterable[str]) -> set[str]:
    """The subset of ``texts`` DuckDB (hence the loader) cannot read as a timestamp."""
    values = list(set(texts))  # the answer is a set: no order needed
    # A lone surrogate (JSON "\\ud800") is not Unicode: DuckDB can hold it neither as JSON nor as
    # a parameter, and the loader refuses the record, so such a text is unparseable as is.
    bad = set() if is_unicode("".join(values)) else {t for t in values if not is_unicode(t)}
    values = [t for t in values if t not in bad]
    if not values:
        return bad
    return bad | sql.unparseable(ctx.plain_cursor, values)


def is_unicode(text: str) -> bool:
    """False when ``text`` holds a lone UTF-16 surrogate (which has no UTF-8 form)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _where(rec: Record) -> dict[str, Any]:
    return {"file": rec.file, "line": rec.line}


def _without_null_links(data: dict[str, Any]) -> dict[str, Any]:
    """Null ``artifact_ids`` entries mean "no such link" (Parquet structs pad missing keys with
    nulls); the loader skips them, so the schema check does too."""
    links = data.get("artifact_ids")
    if type(links) is dict and None in links.values():  # JSON values equal None only when null
        data = dict(data, artifact_ids={k: v for k, v in links.items() if v is not None})
    return data


def passes(kind: str, data: Any) -> bool:
    """Whether a parsed record passes the checks that read only the record itself, as the loops
    below decide them: a JSON object matching its schema and, for an event, with a non-blank id
    (what :mod:`verifier.rules.screen_helper` answers with the record's facts)."""
    if not isinstance(data, dict):
        return False
    if kind == "event":
        data = _without_null_links(data)
    known = verdict_cache(kind)
    if not (known is not None and known[0](data) in known[1]) and schema_errors(kind, data):
        return False
    return kind != "event" or bool(str(data["id"]).strip())


@check("GE110", "GE111", "GE112", "GE113", "GE114", "GE116")
def event_records(ctx: PackContext) -> Iterable:
    if ctx.events_path is not None and not ctx.events and not any(r == "GE115" for r, _ in ctx.problems):
        yield finding("GE116", "the event log has no records", file=ctx.events_path)
    good: list[tuple[Record, str, str]] = []
    known_valid = verdict_cache("event")
    with collector_frozen():
        for rec, parsed in screened(ctx.events, "event"):
            if parsed is None:  # passed on a helper (see passes): its facts are known
                facts = rec._facts
                good.append((rec, facts[3], facts[1]))  # rec.timestamp and rec.ident
                continue
            data, error = parsed
            if error is not None or not isinstance(data, dict):
                ctx.mark_bad(rec)
                yield finding(
                    "GE111",
                    f"malformed JSON: {error}" if error else f"expected a JSON object, got {type(data).__name__}",
                    **_where(rec),
                )
                continue
            data = _without_null_links(data)
            errors = (
                []
                if known_valid is not None and known_valid[0](data) in known_valid[1]
                else schema_errors("event", data)
            )
            for loc, msg in errors:
                yield finding(
                    "GE110",
                    msg,
                    record=str(data["id"]) if type(data.get("id")) in (str, int) else None,
                    path=json_path(loc),
                    **_where(rec),
                )
            if errors:
                ctx.mark_bad(rec)
                continue
            ident = str(data["id"])  # an integer id is read as its decimal text, as the loader does
            if not ident.strip():
                ctx.mark_bad(rec)
                yield finding("GE112", "empty id", path="$.id", **_where(rec))
                continue
            good.append((rec, data["timestamp"], ident))  # rec.timestamp and rec.ident, known here
    bad_times = unparseable_times(ctx, {ts for _, ts, _ in good})
    first: dict[str, Record] = {}
    for rec, ts, ident in good:
        if ts in bad_times:
            ctx.mark_bad(rec)
            yield finding("GE113", f"unparseable timestamp {ts!r}", record=ident, path="$.timestamp", **_where(rec))
            continue
        prev = first.setdefault(ident, rec)
        if prev is not rec:
            ctx.mark_bad(rec)
            yield finding(
                "GE114",
                f"duplicate event id {ident!r} (first at {prev.file}:{prev.line})",
                record=ident,
                path="$.id",
                **_where(rec),
            )


CREATED_KEYS = ("timestamp", "created_at", "date")


def created_text(data: dict[str, Any]) -> str | None:
    """The artifact's creation time text, as the loader picks it."""
    for k in CREATED_KEYS:
        if isinstance(data.get(k), str):
            return data[k]
    return None


@check("GE120", "GE121", "GE122", "GE123")
def artifact_records(ctx: PackContext) -> Iterable:
    by_text: dict[str, list[Record]] = defaultdict(list)  # the good records by creation time text
    known_valid = verdict_cache("artifact")
    with collector_frozen():
        for rec, parsed in screened(ctx.artifacts, "artifact"):
            if parsed is not None:  # else it passed on a helper (see passes)
                data, error = parsed
                if error is not None or not isinstance(data, dict):
                    ctx.mark_bad(rec)
                    yield finding(
                        "GE121",
                        f"malformed JSON: {error}" if error else f"expected a JSON object, got {type(data).__name__}",
                        **_where(rec),
                    )
                    continue
                errors = (
                    []
                    if known_valid is not None and known_valid[0](data) in known_valid[1]
                    else schema_errors("artifact", data)
                )
                for loc, msg in errors:
                    yield finding("GE120", msg, record=rec.ident, path=json_path(loc), **_where(rec))
                if errors:
                    ctx.mark_bad(rec)
                    continue
            ident, sub = rec.ident, rec.subsystem
            if not (ident and ident.strip() and sub and sub.strip()):
                missing = [k for k, v in (("id", ident), ("subsystem", sub)) if not (v or "").strip()]
                ctx.mark_bad(rec)
                yield finding(
                    "GE122", "missing " + " and ".join(missing), record=ident, path=f"$.{missing[0]}", **_where(rec)
                )
                continue
            created = rec.created
            if created is not None:
                by_text[created[1]].append(rec)
    for text in sorted(unparseable_times(ctx, by_text)):
        for rec in by_text[text]:
            ctx.mark_bad(rec)
            key = rec.created[0]
            yield finding(
                "GE123", f"unparseable creation time {text!r}", record=rec.ident, path=f"$.{key}", **_where(rec)
            )
