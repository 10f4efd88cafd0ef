"""Manifests are read by libyaml when PyYAML has it: the same data, the same node lines
and the same errors (message and line, the pure-Python loader's) as the pure-Python loader,
on the repository's manifests and on edits of them that break or bend the YAML."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.contract import manifest

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = sorted(
    p.read_text(encoding="utf-8")
    for pattern in ("domain_packs/*/groundeval.yaml", "tests/contract/packs/**/*.yaml")
    for p in REPO.glob(pattern)
)
# What YAML readers disagree on: indicators, quotes, escapes, tabs, byte order marks,
# line breaks of other kinds, directives, tags, anchors, empty values in flow collections.
EDITS = [*":-[]{},#&*!|>'\"%@`\t?\\ \n", "\r\n", "\r", "\x85", "\u2028", "\u2029", "\ufeff", "\u00a0", "é"]
EDITS += ["- ", ": ", "\n  ", '"\\t"', '"\\N"', '"\\x41"', "'a''b'", "|-\n  ", ">+\n  ", "%YAML 1.2\n---\n"]
EDITS += ["%TAG ! tag:x,2000:\n", "!!binary ", "!!str ", "!x ", "&a ", "*a", "<<: *a\n", "---\n", "...\n", "\x7f"]
EDITS += ["{a: }", "[a, ]", "{: b}", "[a: b]", "\U0001f600", "~", "1_000", ".inf", "0x1F", "[[[[", "]]"]


def _read(parse, text: str) -> tuple:
    """What a reader gives: the data and every node's tag, value and line, or the error."""
    try:
        data, node = parse(Path("groundeval.yaml"), text)
    except (yaml.YAMLError, RecursionError) as exc:
        mark = getattr(exc, "problem_mark", None)
        return "error", type(exc).__name__, str(getattr(exc, "problem", None) or exc), mark and mark.line
    nodes, stack = [], [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        nodes.append((type(n).__name__, n.tag, n.start_mark.line, n.value if isinstance(n, yaml.ScalarNode) else None))
        if isinstance(n, yaml.MappingNode):
            stack += [x for kv in n.value for x in kv]
        elif isinstance(n, yaml.SequenceNode):
            stack += n.value
    return "read", repr(data), nodes


def _pure(path: Path, text: str) -> tuple:
    return manifest._load(path, text, yaml.SafeLoader)


@pytest.mark.slow
@pytest.mark.skipif(manifest._FAST_LOADER is None, reason="PyYAML without libyaml")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.sampled_from(MANIFESTS),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.one_of(st.sampled_from(EDITS), st.integers(1, 6), st.text(max_size=3))),
        max_size=3,
    ),
)
def test_libyaml_reads_a_manifest_as_the_python_loader_does(text, edits):
    for where, edit in edits:
        at = int(where * len(text))
        text = text[:at] + text[at + edit :] if isinstance(edit, int) else text[:at] + edit + text[at:]
    assert _read(manifest._parse, text) == _read(_pure, text)


@pytest.mark.parametrize(
    "text",
    [
        "name: x\nroles: {a: }\n",  # an empty value in a flow mapping: libyaml places it at the '}'
        "name: x\nroles: {a: \n}\n",
        "name: x\nrole: finance_app\trover\n",  # a tab the Python loader refuses
        "name: x\nmatch: {id: {sam?e_as: id}}\n",  # so is this '?'
        "name: x\njoin:\n\ufeff  - a\n",  # and this byte order mark
        "name: " + "[" * 2000 + "]" * 2000 + "\n",  # libyaml's nesting limit: the Python loader decides
    ],
)
def test_texts_libyaml_reads_otherwise_are_read_by_the_python_loader(text):
    assert _read(manifest._parse, text) == _read(_pure, text)


def test_manifests_are_read_by_libyaml_when_it_has_them(monkeypatch):
    """Guard against a vacuous property: the repository's manifests take the fast path."""
    if manifest._FAST_LOADER is None:
        pytest.skip("PyYAML without libyaml")
    used = []
    real = manifest._load
    monkeypatch.setattr(manifest, "_load", lambda p, t, cls: used.append(cls) or real(p, t, cls))
    for text in MANIFESTS:
        manifest._parse(Path("groundeval.yaml"), text)
    assert used and set(used) == {manifest._FAST_LOADER}
