"""``groundeval worlds import tau2 DOMAIN OUT``: a τ² domain written as a world folder.

The folder is the user's own copy, made from the installed package at the time of the import:
``world.yaml`` (tables, τ²'s tools with their kinds and argument schemas, roles, and
``state.adapter`` naming this package's adapter, which runs τ²'s own tools on τ²'s database),
``policy.md`` (τ²'s policy), ``state/<table>.jsonl`` (the initial tables, rows sorted by key:
to read, diff and query — the adapter builds its state from the package), ``tasks.jsonl`` (the
tasks as world tasks) and ``tau2_criteria.jsonl`` (τ²'s criteria a world task has no field for:
environment assertions, compared arguments, natural-language assertions, reward basis, and the
gold actions τ² would skip). The same bytes for the same package version.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import yaml

from ...errors import ContractError
from ...tasks.score import canonical_json

__all__ = ["import_world"]


def import_world(domain: str, out: str | Path, *, overwrite: bool = False) -> Path:
    from .domain import load_tau2_world

    w = load_tau2_world(domain)
    dest = Path(out)
    if dest.exists() and any(dest.iterdir()) and not overwrite:
        raise ContractError.single(str(dest), "the folder is not empty (use --overwrite to replace its files)")
    (dest / "state").mkdir(parents=True, exist_ok=True)
    manifest = w.manifest.model_dump(mode="json", exclude_defaults=True)
    manifest = {"kind": "world", "version": 1, **manifest}
    text = "# tau2-bench's " + domain + " domain, imported by `groundeval worlds import tau2 " + domain + "`\n"
    text += yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=100)
    (dest / "world.yaml").write_text(text, encoding="utf-8")
    (dest / "policy.md").write_text(w.policy, encoding="utf-8")
    ep = w.state.fork()
    try:
        snap = ep.snapshot()
    finally:
        ep.close()
    for table, rows in snap.items():
        (dest / "state" / f"{table}.jsonl").write_text(
            "".join(canonical_json(r) + "\n" for r in rows), encoding="utf-8"
        )
    (dest / "tasks.jsonl").write_text(
        "".join(json.dumps(t.model_dump(mode="json", exclude_defaults=True), sort_keys=True) + "\n" for t in w.tasks),
        encoding="utf-8",
    )
    (dest / "tau2_criteria.jsonl").write_text(
        "".join(
            canonical_json({"task_id": tid, **dataclasses.asdict(c)}) + "\n" for tid, c in sorted(w.criteria.items())
        ),
        encoding="utf-8",
    )
    return dest
