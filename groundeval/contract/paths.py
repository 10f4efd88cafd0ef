"""Dotted paths into event records (``facts.incident_id``, ``actors.0``, ``extras.region``).

One definition serves Python (:func:`resolve`) and SQL (:func:`json_paths`), so the
brute-force reference and the DuckDB joins cannot disagree on what a path means.

* ``a.b.c`` walks mappings; an integer part indexes a list (``actors.0``).
* Extra top-level keys are reachable bare (``region``) or as ``extras.region``.
* A path that does not resolve, or resolves to null, is *missing*.
"""

from __future__ import annotations

import json
from typing import Any

_MISSING = object()


def _parts(path: str) -> list[str]:
    parts = [p for p in path.strip().split(".")]
    if not path.strip() or any(p == "" for p in parts):
        raise ValueError(f"invalid dotted path {path!r}")
    return parts


def candidate_paths(path: str) -> list[list[str]]:
    """The part lists tried in order: the literal path, then ``extras.x`` as bare ``x``."""
    parts = _parts(path)
    out = [parts]
    if parts[0] == "extras" and len(parts) > 1:
        out.append(parts[1:])
    return out


def _walk(record: Any, parts: list[str]) -> Any:
    cur = record
    for part in parts:
        if isinstance(cur, dict):
            if part not in cur:
                return _MISSING
            cur = cur[part]
        elif isinstance(cur, list) and part.lstrip("-").isdigit():
            idx = int(part)
            if not -len(cur) <= idx < len(cur):
                return _MISSING
            cur = cur[idx]
        else:
            return _MISSING
    return cur


def resolve(record: dict[str, Any], path: str) -> Any:
    """Value at ``path`` or ``None`` when it does not resolve."""
    for parts in candidate_paths(path):
        value = _walk(record, parts)
        if value is not _MISSING and value is not None:
            return value
    return None


def json_paths(path: str) -> list[str]:
    """DuckDB JSON paths (``$."facts"."id"``, ``$."actors"[0]``) to try in order."""
    out = []
    for parts in candidate_paths(path):
        js = "$"
        for part in parts:
            if part.lstrip("-").isdigit():
                js += f"[{'#' + part if part.startswith('-') else part}]"
            else:
                js += "." + json.dumps(part)
        out.append(js)
    return out


def join_key(value: Any) -> frozenset[str]:
    """Normalise a resolved value to the set of keys it offers for a join.

    Scalars compare by canonical text, so ``"42"`` and ``42`` join (ids are often
    numbers in one system and strings in another); ``True`` is ``"true"``.
    Lists offer every non-null element; an empty set never joins.
    """
    if value is None:
        return frozenset()
    items = value if isinstance(value, list) else [value]
    out = set()
    for item in items:
        if item is None:
            continue
        if isinstance(item, bool):
            out.add("true" if item else "false")
        elif isinstance(item, float) and item.is_integer():
            out.add(str(int(item)))
        elif isinstance(item, str):
            out.add(item)
        else:
            out.add(json.dumps(item, sort_keys=True, separators=(",", ":")))
    return frozenset(out)


def render_template(template: str, record: dict[str, Any]) -> str | None:
    """Fill ``{dotted.path}`` placeholders; ``None`` when any placeholder is missing."""
    out, i = [], 0
    while i < len(template):
        start = template.find("{", i)
        if start < 0:
            out.append(template[i:])
            break
        end = template.find("}", start)
        if end < 0:
            out.append(template[i:])
            break
        out.append(template[i:start])
        value = resolve(record, template[start + 1 : end])
        if value is None or isinstance(value, dict | list):
            return None
        keys = join_key(value)
        if not keys:
            return None
        out.append(next(iter(keys)))
        i = end + 1
    text = "".join(out)
    return text if text.strip() else None
