"""Rebuild the five bundled domain packs: ``python domain_packs/_build/build_packs.py [NAME ...]``.

Deterministic: the same sources always write the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from domains import DOMAINS  # noqa: E402
from engine import PackBuilder  # noqa: E402


def main(argv: list[str]) -> int:
    wanted = set(argv)
    for domain in DOMAINS:
        if wanted and domain.name not in wanted:
            continue
        builder = PackBuilder(domain)
        builder.build()
        builder.write(HERE.parent / domain.name)
        print(f"{domain.name}: {len(builder.events)} events, {len(builder.artifacts)} artifacts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
