"""Framework adapter tests: real agents of five frameworks against a scripted local LLM server.

Each test module needs its framework (``pip install -e '.[dev,frameworks]'``, or
``bash .ci/extras/frameworks.sh``) and is skipped without it — unless
GROUNDEVAL_REQUIRE_EXTRAS=1, when a missing framework is a collection error, so CI can never
skip these silently. The scenarios are in ``framework_scenarios.py``.
"""

from __future__ import annotations

import os

import pytest

INSTALL = "pip install -e '.[dev,frameworks]' (or bash .ci/extras/frameworks.sh)"

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("CREWAI_TESTING", "true")  # no first-run "view your traces?" prompt on stdin
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("OPENAI_API_KEY", "sk-local-test")  # read by clients that insist on a key


def pytest_configure(config):
    # CrewAI keeps user data under the XDG data folder: keep it in this run's temporary folder
    import tempfile

    os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="groundeval-frameworks-")


def _importable(module: str) -> bool:
    """True when an installed distribution provides ``module`` (a folder of the same name on
    sys.path does not count: pytest puts tests/ there, and tests/agents would otherwise pass
    for the OpenAI Agents SDK's ``agents``; langgraph is a namespace package, so its spec has
    no origin either)."""
    import importlib.metadata
    import importlib.util

    if module.split(".")[0] not in importlib.metadata.packages_distributions():
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def need(module: str, extra: str):
    """Import ``module`` for a test module, or skip that module (a collection error under
    GROUNDEVAL_REQUIRE_EXTRAS=1)."""
    import importlib

    if not _importable(module):
        if os.environ.get("GROUNDEVAL_REQUIRE_EXTRAS") == "1":
            raise ImportError(f"GROUNDEVAL_REQUIRE_EXTRAS=1 but {module!r} ({extra}) is not installed: {INSTALL}")
        pytest.skip(f"{extra} is not installed: {INSTALL}", allow_module_level=True)
    return importlib.import_module(module)


@pytest.fixture(scope="session")
def store():
    from groundeval.store.store import Store

    s = Store.open("tiny")
    yield s
    s.close()


@pytest.fixture(scope="session")
def questions(store):
    from groundeval.questions.generate import generate

    return generate(store)
