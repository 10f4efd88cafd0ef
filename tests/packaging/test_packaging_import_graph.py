"""The package's import graph: each concept owns its SQL and uses other packages through
their public names only.

* No module imports a private name (``_x``) from another package (``groundeval.store``,
  ``groundeval.graph``, ... or a top-level module such as ``groundeval.api``), nor reads
  one off a module it imported from another package.
* SQL text appears only in the query modules: the store (loading, tables, digest, the
  visibility cone, the lenient loader), ``graph/sql.py``, ``questions/sql.py``,
  ``tracks/perspective/sql.py``, ``runtime/search_sql.py`` and ``verifier/sql.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
QUERY_MODULES = (
    "groundeval.store.",
    "groundeval.graph.sql",
    "groundeval.questions.sql",
    "groundeval.tracks.perspective.sql",
    "groundeval.runtime.search_sql",
    "groundeval.verifier.sql",
    "groundeval.worlds.sql",
)
# The benchmark harness builds throwaway databases of its own to time the engine.
SQL_EXEMPT = ("groundeval.bench.",)
SQL = re.compile(
    r"\b(SELECT\b[\s\S]*\bFROM\b|INSERT\s+INTO\b|CREATE\s+(OR\s+REPLACE\s+)?(TEMP\s+)?"
    r"(TABLE|MACRO|VIEW|INDEX)\b|DELETE\s+FROM\b|DROP\s+TABLE\b|UPDATE\s+\w+\s+SET\b|PRAGMA\s+\w+)"
)


def modules() -> dict[str, Path]:
    """Dotted name -> file for every module of the installed package (verifier/ is groundeval.verifier)."""
    out = {}
    for root, prefix in ((REPO / "groundeval", "groundeval"), (REPO / "verifier", "groundeval.verifier")):
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([prefix, *parts])] = path
    return out


def package_of(module: str) -> str:
    """``groundeval.store.cone`` -> ``groundeval.store``; ``groundeval.api`` -> itself."""
    return ".".join(module.split(".")[:2])


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def private_imports(module: str, path: Path, known: dict[str, Path]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    mine = package_of(module)
    out, foreign_modules = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(module, path, node)
            if not target.startswith("groundeval"):
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in known:  # a module imported by name
                    if package_of(full) != mine:
                        foreign_modules[alias.asname or alias.name] = full
                    if alias.name.startswith("_") and package_of(full) != mine:
                        out.append(f"{module}:{node.lineno} imports private module {full}")
                elif alias.name.startswith("_") and not alias.name.startswith("__") and package_of(target) != mine:
                    out.append(f"{module}:{node.lineno} imports {alias.name} from {target}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("groundeval") and any(p.startswith("_") for p in alias.name.split(".")):
                    if package_of(alias.name) != mine:
                        out.append(f"{module}:{node.lineno} imports private module {alias.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in foreign_modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            out.append(f"{module}:{node.lineno} reads {node.attr} off {foreign_modules[node.value.id]}")
    return out


def sql_texts(path: Path) -> list[int]:
    """Lines of string constants (f-string parts included) that hold SQL."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if SQL.search(node.value):
                out.append(node.lineno)
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            if SQL.search(text):
                out.append(node.lineno)
    return sorted(set(out))


def test_no_private_name_crosses_a_package():
    known = modules()
    found = [line for module, path in known.items() for line in private_imports(module, path, known)]
    assert found == [], "use the other package's public names (rename the function, or add a public one)"


def test_sql_only_in_query_modules():
    found = [
        f"{module}:{line}"
        for module, path in modules().items()
        if not module.startswith(QUERY_MODULES + SQL_EXEMPT)
        for line in sql_texts(path)
    ]
    assert found == [], "move the query into its concept's query module (see docs/design.md)"


def test_the_checks_see_what_they_look_for(tmp_path):
    """The scanners are not vacuous: they flag a planted private import and a planted query."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from ..store.store import _digest\nfrom ..store import cone\ncone._private\n"
        'ROWS = "SELECT id FROM events ORDER BY id"\nNOT_SQL = "select a file from the list"\n',
        encoding="utf-8",
    )
    known = {**modules(), "groundeval.report.planted": planted}
    assert len(private_imports("groundeval.report.planted", planted, known)) == 2
    assert sql_texts(planted) == [4]
