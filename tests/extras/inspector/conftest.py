"""The MCP Inspector CLI tests need the npm package ``@modelcontextprotocol/inspector``
(``.ci/extras/inspector.sh`` installs it into ``.venv-inspector/``): skipped with that command
when it is missing, a collection error when GROUNDEVAL_REQUIRE_EXTRAS=1 (CI never skips
silently)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
INSPECTOR = Path(
    os.environ.get("GROUNDEVAL_INSPECTOR", REPO / ".venv-inspector" / "node_modules" / ".bin" / "mcp-inspector")
)
MISSING = not INSPECTOR.is_file()

if MISSING and os.environ.get("GROUNDEVAL_REQUIRE_EXTRAS") == "1":
    raise ImportError(f"GROUNDEVAL_REQUIRE_EXTRAS=1 but {INSPECTOR} is missing: run .ci/extras/inspector.sh")

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(config, items):
    if not MISSING:
        return
    import pytest

    skip = pytest.mark.skip(reason=f"{INSPECTOR} not installed: run .ci/extras/inspector.sh (npm)")
    for item in items:
        if str(item.fspath).startswith(HERE):
            item.add_marker(skip)
