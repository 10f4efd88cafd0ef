"""The package's layers: imports go one way (docs/design.md, "Layers").

Every module of ``groundeval/`` and ``verifier/`` (``groundeval.verifier``) is read with
``ast``; every ``import`` counts, at module level or inside a function, except those under
``if TYPE_CHECKING:``. ``from a.b import c`` is an edge to ``a.b.c`` when that is a module,
else to ``a.b``. The tests fail on

* a cycle between modules (a strongly connected component of more than one module, or a
  module importing itself);
* a cycle between subpackages (``groundeval.store``, ``groundeval.verifier``, … and the
  top-level modules such as ``groundeval.api``, each a node of its own);
* an import that climbs the layer order written in docs/design.md;
* a private name (``_x``, a module or a name in one) imported from another room
  (``test_packaging_import_graph.py`` also checks names read off an imported module).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[2]

# The layer order (docs/design.md): a room may import only rooms of its own layer or below.
# Rooms of one layer must not import each other in a cycle (the cycle tests say so).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "models", "extras", "gc_pause", "helper_process"),
    ("tracks",),
    ("contract",),
    ("store",),
    ("graph",),
    ("trace",),
    ("questions",),
    ("scoring",),
    ("runtime",),
    ("verifier",),
    ("tracks.perspective", "tracks.counterfactual", "tracks.silence"),
    ("agents", "observe", "synth", "distributed"),
    ("report", "judge", "adapters", "testing"),
    ("tasks", "worlds", "trajectories"),
    ("api",),
    ("rl", "bench"),
    ("cli",),
)


def modules() -> dict[str, Path]:
    """Dotted name -> file for every module of the installed package."""
    out = {}
    for root, prefix in ((REPO / "groundeval", "groundeval"), (REPO / "verifier", "groundeval.verifier")):
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([prefix, *parts])] = path
    return out


def room(module: str) -> str:
    """``groundeval.store.cone`` -> ``store``; ``groundeval.api`` -> ``api``; the package itself -> ''.

    One track, one room: a track's package (``groundeval.tracks.perspective.*``) is the room
    ``tracks.perspective``; ``tracks`` itself is the protocol and the registry."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "tracks" and (REPO / "groundeval" / "tracks" / parts[2]).is_dir():
        return f"tracks.{parts[2]}"
    return parts[1] if len(parts) > 1 else ""


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except the body of ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _known(name: str, known: dict[str, Path]) -> str | None:
    """The deepest module of ours that ``name`` is or lies in."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in known:
            return ".".join(parts)
        parts.pop()
    return None


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ours that ``module`` imports (see the module docstring)."""
    out: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = _base(module, path, node)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            if target.startswith("groundeval"):
                found = _known(target, known)
                if found is not None:
                    out.add(found)
    return out


def private_imports(module: str, path: Path, known: dict[str, Path]) -> list[str]:
    """``module:line imports name`` for each private name or module (``_x``) it imports from
    another room."""
    out = []
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = _base(module, path, node)
            names = [f"{base}.{alias.name}" for alias in node.names]
        for full in names:
            found = _known(full, known) if full.startswith("groundeval") else None
            if found is None or room(found) == room(module):
                continue
            if any(p.startswith("_") and not p.startswith("__") for p in full.split(".")):
                out.append(f"{module}:{node.lineno} imports {full}")
    return out


def module_graph(known: dict[str, Path] | None = None) -> nx.DiGraph:
    known = modules() if known is None else known
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for module, path in known.items():
        graph.add_edges_from((module, target) for target in imports(module, path, known))
    return graph


def room_graph(graph: nx.DiGraph) -> nx.DiGraph:
    rooms = nx.DiGraph()
    rooms.add_nodes_from(room(m) for m in graph if room(m))
    rooms.add_edges_from((room(a), room(b)) for a, b in graph.edges if room(a) and room(b) and room(a) != room(b))
    return rooms


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """The strongly connected components that hold a cycle, each sorted, largest first."""
    found = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    found += [[n] for n in graph if graph.has_edge(n, n)]
    return sorted(found, key=lambda c: (-len(c), c))


def _explain(graph: nx.DiGraph, component: list[str]) -> str:
    """One cycle of the component, as ``a -> b -> ... -> a``."""
    cycle = nx.find_cycle(graph.subgraph(component))
    return " -> ".join([cycle[0][0], *(b for _, b in cycle)])


def layer_of(name: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if name in layer:
            return i
    return None


def test_no_import_cycle_between_modules():
    graph = module_graph()
    found = [_explain(graph, c) for c in cycles(graph)]
    assert found == [], "import cycles between modules (move the shared piece down a layer)"


def test_no_import_cycle_between_subpackages():
    rooms = room_graph(module_graph())
    found = [_explain(rooms, c) for c in cycles(rooms)]
    assert found == [], "import cycles between subpackages (see docs/design.md, Layers)"


def test_imports_follow_the_layer_order():
    """Every room is in the order, and imports only its own layer or lower ones."""
    graph = module_graph()
    rooms = room_graph(graph)
    assert sorted(r for r in rooms if layer_of(r) is None) == [], "add the new subpackage to LAYERS and docs/design.md"
    up = sorted(
        f"{a} -> {b}"
        for a, b in graph.edges
        if room(a) and room(b) and (layer_of(room(b)) or 0) > (layer_of(room(a)) or 0)
    )
    assert up == [], "an import climbs the layer order"


def test_no_private_name_crosses_a_room():
    known = modules()
    found = sorted(line for module, path in known.items() for line in private_imports(module, path, known))
    assert found == [], "use the other room's public names (rename the function, or add a public one)"


def test_the_reader_sees_what_it_looks_for(tmp_path):
    """Function-level imports count, ``TYPE_CHECKING`` ones do not, relative ones resolve, and a
    planted cycle is found."""
    pkg = tmp_path / "groundeval"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("from . import x\n")
    (pkg / "a" / "x.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..b import y\n"
        "def f():\n    from ..b.y import g\n"
    )
    (pkg / "b").mkdir()
    (pkg / "b" / "__init__.py").write_text("")
    (pkg / "b" / "y.py").write_text(
        "import groundeval.a.x\nfrom groundeval.b import z\ndef h():\n    from groundeval.a.x import _helper\n"
    )
    (pkg / "b" / "z.py").write_text("if True:\n    from ..a import x as _x\n")
    known = {
        "groundeval": pkg / "__init__.py",
        "groundeval.a": pkg / "a" / "__init__.py",
        "groundeval.a.x": pkg / "a" / "x.py",
        "groundeval.b": pkg / "b" / "__init__.py",
        "groundeval.b.y": pkg / "b" / "y.py",
        "groundeval.b.z": pkg / "b" / "z.py",
    }
    graph = module_graph(known)
    assert set(graph.edges) == {
        ("groundeval.a", "groundeval.a.x"),
        ("groundeval.a.x", "groundeval.b.y"),
        ("groundeval.b.y", "groundeval.a.x"),
        ("groundeval.b.y", "groundeval.b.z"),
        ("groundeval.b.z", "groundeval.a.x"),
    }
    assert cycles(graph) == [["groundeval.a.x", "groundeval.b.y", "groundeval.b.z"]]
    assert cycles(room_graph(graph)) == [["a", "b"]]
    assert private_imports("groundeval.b.y", known["groundeval.b.y"], known) == [
        "groundeval.b.y:4 imports groundeval.a.x._helper"
    ]
    assert private_imports("groundeval.b.z", known["groundeval.b.z"], known) == []  # x is public; _x a local alias
