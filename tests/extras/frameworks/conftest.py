"""Framework adapter tests: real agents of five frameworks against a scripted local LLM server.

Each test module needs its framework (``pip install -e '.[dev,frameworks]'``, or
``bash .ci/extras/frameworks.sh``) and is skipped without it — unless
GROUNDEVAL_REQUIRE_EXTRAS=1, when a missing framework is a collection error, so CI can never
skip these silently. The scenarios are in ``framework_scenarios.py``.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager

import pytest

INSTALL = "pip install -e '.[dev,frameworks]' (or bash .ci/extras/frameworks.sh)"

# the frameworks' switches for a test run; set only around this folder's tests (see _environment)
ENVIRONMENT = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_TESTING": "true",  # no first-run "view your traces?" prompt on stdin
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "LANGSMITH_TRACING": "false",
    "OPENAI_API_KEY": "sk-local-test",  # read by clients that insist on a key
}


@contextmanager
def _framework_environment():
    """The switches above and a temporary home: CrewAI writes user data (XDG data folder), a
    credentials key (~/.local/share, whatever XDG says) and settings (~/.config) on import and
    when it runs. Restored afterwards, so the rest of a test session never sees them."""
    global _HOME
    if _HOME is None:
        _HOME = tempfile.mkdtemp(prefix="groundeval-frameworks-home-")
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {
            **ENVIRONMENT,
            "HOME": _HOME,
            "XDG_DATA_HOME": os.path.join(_HOME, ".local", "share"),
            "XDG_CONFIG_HOME": os.path.join(_HOME, ".config"),
        }.items():
            mp.setenv(key, value)
        yield


_HOME: str | None = None


@pytest.fixture(scope="module", autouse=True)
def _environment():
    with _framework_environment():
        yield


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
    with _framework_environment():
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
