"""Find and read a pack manifest: native ``groundeval.yaml`` or an original ``config.yaml``.

Paths resolve relative to the manifest's folder, never the working directory.
Validation errors name the file, the YAML line and the field.

A command resolves its pack once (:func:`resolve`): the :class:`ResolvedPack` it gets is the
pack's path (a ``str``) carrying the manifest found, read and validated on first use, and every
reader of the pack — :func:`load_manifest`, ``Store.open``, the verifier — takes it and reads
nothing again.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import ContractError, Problem
from .legacy import LegacyConfig, dotted, legacy_to_native
from . import limits
from .models import Manifest
from .outside import outside, refusal

NATIVE_NAMES = ("groundeval.yaml", "groundeval.yml", "groundeval.json")
LEGACY_NAMES = ("config.yaml", "config.yml")


@dataclass(frozen=True)
class PackPaths:
    """A validated manifest with its resolved source paths."""

    manifest: Manifest
    manifest_path: Path
    events_path: Path
    artifacts_path: Path
    legacy: bool

    @property
    def root(self) -> Path:
        return self.manifest_path.parent


def find_manifest(path: str | Path) -> Path:
    """The manifest of a pack given as a manifest file, a pack folder, or the bare name of a
    bundled pack (``tiny``; an existing path of that name wins)."""
    if isinstance(path, ResolvedPack):
        return path.manifest_path()
    p = Path(path)
    if not p.exists():
        from .packs import bundled_pack

        p = bundled_pack(path) or p
    if p.is_file():
        return p
    if p.is_dir():
        for name in NATIVE_NAMES + LEGACY_NAMES:
            if (p / name).is_file():
                return p / name
        from .packs import WORLD_NAMES

        if any((p / name).is_file() for name in WORLD_NAMES):
            raise ContractError.single(
                str(p),
                "this is a world (it has a world manifest), not an evaluation pack: run it with "
                "'groundeval run' or 'groundeval eval', check it with 'groundeval worlds check' (docs/worlds.md)",
            )
        raise ContractError.single(
            str(p), f"no manifest found: expected one of {', '.join(NATIVE_NAMES + LEGACY_NAMES)}"
        )
    from .packs import not_found_message

    raise ContractError.single(str(p), not_found_message(path))


def yaml_line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Line (1-based) of the deepest YAML node reachable along ``loc``."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if k.value == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            nxt = node.value[part]
        else:
            nxt = None
        if nxt is None:
            break
        node = nxt
        line = node.start_mark.line + 1
    return line


def key_line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Line (1-based) of the mapping key that ``loc`` ends with (the value's line otherwise)."""
    if not loc or not isinstance(loc[-1], str):
        return yaml_line(node, loc)
    parent_loc = loc[:-1]
    parent = node
    for part in parent_loc:
        if isinstance(parent, yaml.MappingNode):
            parent = next((v for k, v in parent.value if k.value == str(part)), None)
        elif isinstance(parent, yaml.SequenceNode) and isinstance(part, int) and part < len(parent.value):
            parent = parent.value[part]
        else:
            parent = None
        if parent is None:
            return yaml_line(node, loc)
    if isinstance(parent, yaml.MappingNode):
        for k, _v in parent.value:
            if k.value == loc[-1]:
                return k.start_mark.line + 1
    return yaml_line(node, loc)


def read_manifest_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    """The manifest's data and its composed node (for line numbers), parsed once.

    Input limits (``limits.py``) are checked first on the text, then on the node
    before any value is constructed, so no manifest can make the parse slow."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ContractError.single(str(path), f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ContractError.single(str(path), "not valid UTF-8", line=line) from None
    problem = limits.text_problem(str(path), text)
    if problem is not None:
        raise ContractError([problem])
    try:
        data, node = _parse(path, text)
    except (yaml.YAMLError, RecursionError) as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ContractError.single(
            str(path),
            f"invalid YAML: {getattr(exc, 'problem', None) or exc}",
            line=mark.line + 1 if mark else None,
        ) from None
    if not isinstance(data, dict):
        raise ContractError.single(str(path), "expected a mapping at the top level", line=1)
    problem = surrogate_problem(str(path), data, node)
    if problem is not None:
        raise ContractError([problem])
    return data, node


# libyaml's parser when PyYAML was built with it: ~8x faster than the pure-Python one
# (60 -> 8 ms for a 20 KB manifest, read by the loader and the verifier).
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


_PURE_ONLY = ("\t", "?", "\ufeff")  # characters whose reading differs (tests/contract/test_manifest_libyaml.py)


def _parse(path: Path, text: str) -> tuple[Any, yaml.Node | None]:
    """(data, node) of a manifest text, its node checked (``limits.node_problem``) before any
    value is constructed — as the pure-Python loader reads it, whose errors (message, line)
    are the ones raised. libyaml reads the text when it reads it the same: never a text with
    a tab, a ``?`` or a byte order mark (the pure-Python loader refuses some that libyaml
    takes), nor one libyaml refuses or whose node has an empty value in a flow collection
    (placed at the next token, not after the ``:``); the pure-Python loader reads those."""
    read = None
    if _FAST_LOADER is not None and not any(c in text for c in _PURE_ONLY):
        try:
            read = _load(path, text, _FAST_LOADER)
        except (yaml.YAMLError, RecursionError):
            pass
    return read or _load(path, text, yaml.SafeLoader)


def _load(path: Path, text: str, loader_class: Any) -> tuple[Any, yaml.Node | None]:
    """(data, node); with libyaml, ``None`` if the node may be placed otherwise (``_parse``)."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if loader_class is _FAST_LOADER and _empty_in_flow(node):
            return None
        problem = limits.node_problem(str(path), node)
        if problem is not None:
            raise ContractError([problem])
        return (loader.construct_document(node) if node is not None else None), node
    finally:
        loader.dispose()


def _empty_in_flow(node: yaml.Node | None) -> bool:
    """Whether a flow collection holds an empty plain scalar (``{a: }``; ``[a, ]`` holds none).
    Each node once: aliases share theirs."""
    stack, seen = [(node, False)], set()
    while stack:
        cur, flow = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, yaml.ScalarNode):
            if flow and cur.value == "" and not cur.style:
                return True
        elif isinstance(cur, yaml.MappingNode):
            stack += [(n, bool(cur.flow_style)) for kv in cur.value for n in kv]
        elif isinstance(cur, yaml.SequenceNode):
            stack += [(n, bool(cur.flow_style)) for n in cur.value]
    return False


def _lone_surrogate(value: Any, loc: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """Location of the first string (key or value) holding a lone UTF-16 surrogate.

    YAML accepts ``"\\ud800"``; nothing downstream can encode it, so it is bad input."""
    if isinstance(value, str):
        return loc if any("\ud800" <= ch <= "\udfff" for ch in value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            found = _lone_surrogate(k, loc + (k,)) if isinstance(k, str) else None
            found = found or _lone_surrogate(v, loc + (k,))
            if found is not None:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = _lone_surrogate(v, loc + (i,))
            if found is not None:
                return found
    return None


def surrogate_problem(file: str, data: Any, node: yaml.Node | None) -> Problem | None:
    """The manifest's first lone surrogate as a located problem, or ``None``."""
    bad = _lone_surrogate(data)
    if bad is None:
        return None
    return Problem(
        file=file,
        line=yaml_line(node, bad),
        field=".".join(str(p).encode("unicode_escape").decode() for p in bad),
        message="not valid Unicode: a lone surrogate escape (\\uD800-\\uDFFF without its pair)",
    )


def resolve_source(root: Path, rel: str, fallback: str | None) -> Path:
    """Resolve against the manifest; original packs may keep sources beside config.yaml."""
    primary = (root / rel).resolve()
    if primary.exists() or fallback is None:
        return primary
    alt = (root / fallback).resolve()
    return alt if alt.exists() else primary


def load_manifest(path: str | Path) -> PackPaths:
    """The validated manifest of a pack (see :func:`find_manifest`) with its source paths;
    a :class:`ResolvedPack`'s own, made once."""
    if isinstance(path, ResolvedPack):
        return path.paths()
    mpath = find_manifest(path).resolve()
    return validated_manifest(mpath, *read_manifest_yaml(mpath))


def validated_manifest(mpath: Path, data: Any, node: yaml.Node | None) -> PackPaths:
    """The manifest at ``mpath`` (its parsed ``data`` and ``node``) validated, with its sources."""
    legacy = mpath.name in LEGACY_NAMES or ("access" not in data and "roles" in data)
    mapping: LegacyConfig | None = None
    problems: list[Problem] = []
    if legacy:
        mapping = legacy_to_native(data, default_name=mpath.parent.name)
        data = mapping.native
        problems += [
            Problem(file=str(mpath), line=yaml_line(node, loc), field=dotted(loc) or None, message=msg)
            for loc, msg in mapping.errors
        ]
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            if mapping is not None:
                loc = mapping.legacy_loc(loc)
            problems.append(
                Problem(
                    file=str(mpath),
                    line=yaml_line(node, loc),
                    field=(dotted(loc) if mapping is not None else ".".join(str(p) for p in loc)) or None,
                    message=err["msg"]
                    + (
                        f" (got {err['input']!r})"
                        if err["type"] != "missing" and not isinstance(err.get("input"), dict | list)
                        else ""
                    ),
                )
            )
    if problems:
        raise ContractError(problems) from None
    root = mpath.parent
    events = resolve_source(root, manifest.sources.events, "events.jsonl" if legacy else None)
    artifacts = resolve_source(root, manifest.sources.artifacts, "artifacts" if legacy else None)
    for label, p in (("events", events), ("artifacts", artifacts)):
        if not p.exists():
            loc = mapping.legacy_loc(("sources", label)) if mapping is not None else ("sources", label)
            raise ContractError.single(
                str(mpath),
                f"{label} source not found: {p}",
                line=yaml_line(node, loc) if loc else None,
                field=(dotted(loc) if mapping is not None else ".".join(loc)) or None,
            )
        real = outside(p, root)
        if real is not None:  # a pack reads only inside its folder (contract/outside.py)
            loc = mapping.legacy_loc(("sources", label)) if mapping is not None else ("sources", label)
            raise ContractError.single(
                str(mpath),
                refusal(f"the {label} source {getattr(manifest.sources, label)!r}", real, root),
                line=yaml_line(node, loc) if loc else None,
                field=(dotted(loc) if mapping is not None else ".".join(loc)) or None,
            )
    return PackPaths(manifest, mpath, events, artifacts, legacy)


class ResolvedPack(str):
    """A pack argument resolved once for a whole command (:func:`resolve`).

    It is the text of the pack's path — a ``str``, so it goes wherever a pack path went and
    prints as one — and it keeps what reading the pack found, each made on first use:
    :meth:`manifest_path` (the manifest in it), :meth:`manifest_yaml` (its data and node, read
    once) and :meth:`paths` (the validated manifest with its source paths). ``given`` is what
    the user wrote (``tiny``). A failure is not kept: asking again raises it again."""

    given: str

    def __new__(cls, path: str | Path, given: str | Path | None = None) -> ResolvedPack:
        self = super().__new__(cls, str(path))
        self.given = str(path if given is None else given)
        self._manifest_path: Path | None = None
        self._yaml: tuple[Any, yaml.Node | None] | None = None
        self._paths: PackPaths | None = None
        return self

    @property
    def path(self) -> Path:
        return Path(str(self))

    def manifest_path(self) -> Path:
        """The pack's manifest file, absolute (a :class:`ContractError` when it has none)."""
        if self._manifest_path is None:
            self._manifest_path = find_manifest(self.path).resolve()
        return self._manifest_path

    def manifest_yaml(self) -> tuple[Any, yaml.Node | None]:
        """The manifest's data (a copy each time: readers may keep and change theirs) and node."""
        if self._yaml is None:
            self._yaml = read_manifest_yaml(self.manifest_path())
        data, node = self._yaml
        return copy.deepcopy(data), node

    def paths(self) -> PackPaths:
        """The validated manifest and its sources (:func:`load_manifest`)."""
        if self._paths is None:
            self._paths = validated_manifest(self.manifest_path(), *self.manifest_yaml())
        return self._paths


def resolve(value: str | Path) -> ResolvedPack:
    """``value`` (a path, a manifest or the name of a bundled pack) resolved once: a
    :class:`ResolvedPack` (itself when it is one). A missing path that names no bundled pack is
    the :class:`ContractError` of :func:`groundeval.contract.packs.resolve_pack`."""
    if isinstance(value, ResolvedPack):
        return value
    from .packs import resolve_pack

    return ResolvedPack(resolve_pack(value), value)
