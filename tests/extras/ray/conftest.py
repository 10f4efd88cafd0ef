"""Ray backend tests: a local Ray instance on this machine (2 workers), started once.

Skipped when Ray is not installed (``pip install -e '.[dev,ray]'``, or ``.ci/extras/ray.sh``),
unless GROUNDEVAL_REQUIRE_EXTRAS=1 — then a missing Ray is a collection error, so CI can
never skip these silently. This folder is put on PYTHONPATH before Ray starts, so the
workers (which inherit the environment) import the test agents in ``ray_agents.py`` as
any user's ``module:factory`` agent must be importable on them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
INSTALL = "pip install -e '.[dev,ray]' (or bash .ci/extras/ray.sh)"

RAY_MISSING = importlib.util.find_spec("ray") is None
if RAY_MISSING and os.environ.get("GROUNDEVAL_REQUIRE_EXTRAS") == "1":
    raise ImportError(f"GROUNDEVAL_REQUIRE_EXTRAS=1 but Ray is not installed: {INSTALL}")

WORKERS = 2


def pytest_collection_modifyitems(config, items):
    if not RAY_MISSING:
        return
    skip = pytest.mark.skip(reason=f"Ray is not installed: {INSTALL}")
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def ray_backend():
    """One local Ray instance for the session (starting one takes ~10 s here)."""
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])
    sys.path.insert(0, str(HERE))
    os.environ.pop("RAY_ADDRESS", None)
    from groundeval.distributed import get_backend

    backend = get_backend("ray", workers=WORKERS)
    assert backend.workers == WORKERS  # starts Ray
    yield backend
    backend.close()
