"""Building answers the way a question's answer schema spells them.

Built-in agents know the canonical field names (the ground-truth names); a pack's
schema may use an accepted alias or forbid extra keys, so answers are fitted to it.
"""

from __future__ import annotations

from typing import Any

from ..scoring.answers import FIELDS


def fit(answer: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    """Rename canonical fields to the spelling the schema declares and drop fields it forbids."""
    props = (schema or {}).get("properties")
    if not isinstance(props, dict) or not props:
        return dict(answer)
    closed = (schema or {}).get("additionalProperties") is False
    out: dict[str, Any] = {}
    for key, value in answer.items():
        spellings = FIELDS.get(key, (key,))
        name = next((s for s in spellings if s in props), None)
        if name is None:
            if closed:
                continue
            name = key
        out[name] = value
    return out


def default_answer(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The emptiest answer the schema accepts: false, "none", [] and "" for required fields."""
    schema = schema or {}
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        out[name] = _empty(props.get(name) or {})
    return out


def _empty(prop: dict[str, Any]) -> Any:
    if "const" in prop:
        return prop["const"]
    if prop.get("enum"):
        values = prop["enum"]
        for preferred in (False, "none", "no_causal_link"):
            if preferred in values:
                return preferred
        return values[0]
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    return {"boolean": False, "array": [], "integer": 0, "number": 0, "object": {}, "null": None}.get(kind, "none")
