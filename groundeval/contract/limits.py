"""Input limits for manifests: fail fast, located, before any expensive work.

A manifest is a small hand-written file; these bounds are far above any real one and
far below what makes parsing or validation slow (a YAML alias bomb, a 10 MB line, a
5 MB actor name). Each violation names the file, the line and what the limit is.
"""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import Problem

MAX_MANIFEST_BYTES = 4 * 1024 * 1024  # the whole file
MAX_LINE_CHARS = 100_000  # one line
MAX_STRING_CHARS = 10_000  # one key or scalar value
MAX_DEPTH = 64  # nesting of mappings and sequences
MAX_EXPANDED_NODES = 200_000  # nodes once every alias is expanded


def text_problem(file: str, text: str) -> Problem | None:
    """The first size or line-length violation of the raw text, or ``None``."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_MANIFEST_BYTES:
        return Problem(file=file, message=f"manifest larger than {MAX_MANIFEST_BYTES} bytes")
    for n, line in enumerate(text.split("\n"), start=1):
        if len(line) > MAX_LINE_CHARS:
            return Problem(file=file, line=n, message=f"line longer than {MAX_LINE_CHARS} characters")
    return None


def node_problem(file: str, node: yaml.Node | None) -> Problem | None:
    """The first depth, string-length or alias-expansion violation of a composed document.

    Aliases share their node, so the expanded size is counted with one memo per node:
    linear in the document, whatever the expansion would be."""
    if node is None:
        return None
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(node, 1, False)]
    while stack:
        cur, depth, done = stack.pop()
        if done:
            sizes[id(cur)] = 1 + sum(sizes[id(c)] for c in _children(cur))
            if sizes[id(cur)] > MAX_EXPANDED_NODES:
                return Problem(
                    file=file,
                    line=cur.start_mark.line + 1,
                    message=f"expands to more than {MAX_EXPANDED_NODES} values (YAML aliases)",
                )
            continue
        if id(cur) in sizes:
            continue
        if depth > MAX_DEPTH:
            return Problem(file=file, line=cur.start_mark.line + 1, message=f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(cur, yaml.ScalarNode) and len(cur.value) > MAX_STRING_CHARS:
            return Problem(
                file=file,
                line=cur.start_mark.line + 1,
                message=f"a key or value longer than {MAX_STRING_CHARS} characters",
            )
        stack.append((cur, depth, True))
        stack.extend((c, depth + 1, False) for c in _children(cur) if id(c) not in sizes)
    return None


def _children(node: yaml.Node) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
