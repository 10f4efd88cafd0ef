"""A deliberate public API: ``groundeval`` exports the workflow and the core types lazily
(``import groundeval`` loads neither DuckDB nor pydantic), every subpackage declares
``__all__``, and the package ships ``py.typed``."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import groundeval

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = ("load", "verify", "generate", "run", "score", "report", "evaluate")
TYPES = ("Contract", "Question", "Trace", "Episode", "Agent", "QuestionScore", "RunReport")


def test_workflow_and_types_are_exported():
    assert set(WORKFLOW) | set(TYPES) <= set(groundeval.__all__)
    for name in groundeval.__all__:
        assert getattr(groundeval, name) is not None, name
    for name in WORKFLOW:
        assert callable(getattr(groundeval, name)), name
    from groundeval.questions.model import Question
    from groundeval.store.store import Store

    assert groundeval.Question is Question and groundeval.Contract is Store


def test_import_is_lazy():
    code = (
        "import sys, groundeval; groundeval.ContractError; "
        "print(sorted(m for m in ('duckdb', 'pydantic', 'networkx', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_report_is_the_package_and_the_step():
    import groundeval.report.render  # noqa: F401 - the package loaded first must still be callable

    assert callable(groundeval.report) and hasattr(groundeval.report, "render")


def test_every_subpackage_declares_all():
    for init in sorted((REPO / "groundeval").glob("*/__init__.py")) + [REPO / "verifier" / "__init__.py"]:
        name = "groundeval.verifier" if init.parent.name == "verifier" else f"groundeval.{init.parent.name}"
        module = importlib.import_module(name)
        assert isinstance(getattr(module, "__all__", None), list), name
        for item in module.__all__:
            assert hasattr(module, item) or importlib.util.find_spec(f"{name}.{item}") is not None, (name, item)


def test_py_typed_ships():
    assert (REPO / "groundeval" / "py.typed").exists()
    assert "py.typed" in (REPO / "setup.py").read_text(encoding="utf-8")
