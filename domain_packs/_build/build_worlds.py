"""Rebuild the two bundled worlds: ``python domain_packs/_build/build_worlds.py [--out DIR] [--seed N] [NAME ...]``.

support_desk (customer support: orders, refunds, escalations) and it_desk (IT and access:
accounts, grants, approvals). Deterministic: seeded ``random.Random`` instances, no clock, rows
sorted by key and tasks by id, so the same sources always write the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import world_it  # noqa: E402
import world_support  # noqa: E402
from world_common import readme, write_world  # noqa: E402

WORLDS = {"support_desk": world_support, "it_desk": world_it}


def build_world(name: str, folder: Path, seed: int | None = None) -> str:
    """Write world ``name`` into ``folder`` (from ``seed``, default the world's own); a summary line."""
    module = WORLDS[name]
    manifest, policy, state, tasks = module.build(module.SEED if seed is None else seed)
    extra = {"README.md": readme(module.README, manifest, state, tasks), **getattr(module, "EXTRA_FILES", {})}
    write_world(folder, manifest, policy, state, tasks, extra)
    rows = ", ".join(f"{t} {len(r)}" for t, r in state.items())
    return f"{name}: {rows}; {len(tasks)} tasks"


def _option(argv: list[str], flag: str) -> str | None:
    if flag not in argv:
        return None
    i = argv.index(flag)
    value = argv[i + 1]
    del argv[i : i + 2]
    return value


def main(argv: list[str], out: Path | None = None) -> int:
    """Build the worlds named in ``argv`` (all when none) into ``out`` (default: domain_packs/).
    Options: ``--out DIR`` (as ``out``), ``--seed N`` (another world of the same shape; the
    checked-in worlds are built without it)."""
    argv = list(argv)
    where, seed = _option(argv, "--out"), _option(argv, "--seed")
    root = Path(where) if where else (out or HERE.parent)
    for name in WORLDS:
        if not argv or name in argv:
            print(build_world(name, root / name, None if seed is None else int(seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
