"""Drift between a saved verification (baseline) and now."""

from __future__ import annotations

from typing import Any


def facts_of(ctx) -> dict[str, Any]:
    from groundeval.store import verify_sql as sql

    out: dict[str, Any] = {}
    if ctx.store is not None:
        out.update(sql.facts(ctx.store))
        out["digest"] = ctx.store.digest
    return out
