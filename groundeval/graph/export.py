"""Deterministic exports of the event graph: JSON, GraphML and Graphviz DOT."""

from __future__ import annotations

import io
import json
from typing import Any

import networkx as nx

from .build import EventGraph

FORMATS = ("json", "graphml", "dot")


def to_data(eg: EventGraph) -> dict[str, Any]:
    """Nodes, edges and every record as plain, sorted JSON data."""
    g = eg.graph
    nodes = [{"id": n, **g.nodes[n]} for n in sorted(g.nodes)]
    edges = sorted(
        ({"source": u, "target": v, "key": k, **d} for u, v, k, d in g.edges(keys=True, data=True)),
        key=lambda e: (e["source"], e["target"], e["key"]),
    )
    return {
        "nodes": nodes,
        "edges": edges,
        "causal_edges": [r.to_dict() for r in eg.causal_edges],
        "distractors": [r.to_dict() for r in eg.distractors],
        "absences": [r.to_dict() for r in eg.absences],
        "presences": [r.to_dict() for r in eg.presences],
        "ambiguous": [r.to_dict() for r in eg.ambiguous],
        "stats": eg.stats,
    }


def to_json(eg: EventGraph) -> str:
    return json.dumps(to_data(eg), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _sorted_copy(g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    h = nx.MultiDiGraph()
    for n in sorted(g.nodes):
        h.add_node(n, **{k: g.nodes[n][k] for k in sorted(g.nodes[n])})
    for u, v, k, d in sorted(g.edges(keys=True, data=True), key=lambda e: (e[0], e[1], e[2])):
        h.add_edge(u, v, key=k, **{a: d[a] for a in sorted(d)})
    return h


def to_graphml(eg: EventGraph) -> str:
    buf = io.BytesIO()
    nx.write_graphml(_sorted_copy(eg.graph), buf, encoding="utf-8", prettyprint=True)
    return buf.getvalue().decode("utf-8")


def _dot_id(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


_STYLE = {"causal": "solid", "distractor": "dashed", "response": "dotted"}


def to_dot(eg: EventGraph) -> str:
    g = eg.graph
    lines = ["digraph groundeval {", "  rankdir=LR;", "  node [shape=box];"]
    for n in sorted(g.nodes):
        attrs = g.nodes[n]
        label = f"{n}\\n{attrs.get('type', '')}"
        lines.append(f"  {_dot_id(n)} [label={_dot_id(label).replace(chr(92) * 2 + 'n', chr(92) + 'n')}];")
    for u, v, k, d in sorted(g.edges(keys=True, data=True), key=lambda e: (e[0], e[1], e[2])):
        style = _STYLE.get(d.get("kind", ""), "solid")
        lines.append(f"  {_dot_id(u)} -> {_dot_id(v)} [label={_dot_id(d.get('spec', ''))}, style={style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def export(eg: EventGraph, fmt: str) -> str:
    if fmt == "json":
        return to_json(eg)
    if fmt == "graphml":
        return to_graphml(eg)
    if fmt == "dot":
        return to_dot(eg)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
