"""Rebuild the two bundled worlds: ``python domain_packs/_build/build_worlds.py [--out DIR] [NAME ...]``.

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


def main(argv: list[str], out: Path | None = None) -> int:
    """Build the worlds named in ``argv`` (all when none) into ``out`` (default: domain_packs/);
    ``--out DIR`` on the command line does the same as ``out``."""
    argv = list(argv)
    if "--out" in argv:
        i = argv.index("--out")
        out = Path(argv[i + 1])
        del argv[i : i + 2]
    root = out or HERE.parent
    for name, module in WORLDS.items():
        if argv and name not in argv:
            continue
        manifest, policy, state, tasks = module.build()
        extra = {"README.md": readme(module.README, manifest, state, tasks), **getattr(module, "EXTRA_FILES", {})}
        write_world(root / name, manifest, policy, state, tasks, extra)
        rows = ", ".join(f"{t} {len(r)}" for t, r in state.items())
        print(f"{name}: {rows}; {len(tasks)} tasks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
