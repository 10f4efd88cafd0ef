"""Malformed and inconsistent contracts never crash the verifier: it always returns findings."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval import verifier
from verifier_drafts import TINY, PackDraft

json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, width=16),
    st.text(max_size=6),
    st.sampled_from(["alice", "engineer", "INC-42", "2026-03-01T00:00:00Z", "facts.incident_id", "slack", "zed"]),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6,
)

MANIFEST_PATHS = [
    ("timezone",),
    ("sources", "events"),
    ("access", "actors", "alice"),
    ("access", "actors", "zed"),
    ("access", "roles", "engineer"),
    ("access", "roles", "engineer", "subsystems"),
    ("access", "restrictions", "dm-bob-alice"),
    ("evaluation", "causal_links"),
    ("evaluation", "causal_links", 0, "join"),
    ("evaluation", "causal_links", 0, "max_gap_days"),
    ("evaluation", "silence_pairs", 0, "search_space_selectors"),
    ("evaluation", "perspective"),
    ("evaluation", "perspective_actors"),
    ("evaluation", "seed"),
    ("name",),
    ("bogus",),
]
EVENT_KEYS = ["id", "type", "timestamp", "actors", "artifact_ids", "facts", "extra"]
ARTIFACT_KEYS = ["id", "subsystem", "timestamp", "title", "actors", "visibility", "body"]


def _set(root, path, value):
    node = root
    for part in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(part, {})
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return
    if isinstance(node, dict):
        node[path[-1]] = value
    elif isinstance(node, list) and isinstance(path[-1], int) and path[-1] < len(node):
        node[path[-1]] = value


edit = st.one_of(
    st.tuples(st.just("manifest"), st.sampled_from(MANIFEST_PATHS), json_value),
    st.tuples(st.just("event"), st.tuples(st.integers(0, 8), st.sampled_from(EVENT_KEYS)), json_value),
    st.tuples(st.just("artifact"), st.tuples(st.integers(0, 8), st.sampled_from(ARTIFACT_KEYS)), json_value),
    st.tuples(st.just("event_line"), st.integers(0, 9), st.text(max_size=20)),
    st.tuples(st.just("drop_event"), st.integers(0, 8), st.none()),
    st.tuples(st.just("manifest_text"), st.none(), st.text(max_size=40)),
)


def _apply(d: PackDraft, kind, where, value):
    if kind == "manifest":
        _set(d.manifest, where, value)
    elif kind == "event" and where[0] < len(d.events) and isinstance(d.events[where[0]], dict):
        d.events[where[0]][where[1]] = value
    elif kind == "artifact":
        key = sorted(d.artifacts)[where[0] % len(d.artifacts)]
        if isinstance(d.artifacts[key], dict):
            d.artifacts[key][where[1]] = value
    elif kind == "event_line":
        d.events.insert(min(where, len(d.events)), value)
    elif kind == "drop_event" and where < len(d.events):
        d.events.pop(where)
    elif kind == "manifest_text":
        d.manifest_text = value


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=4))
def test_mutated_contracts_never_crash(edits):
    d = PackDraft(TINY)
    for kind, where, value in edits:
        _apply(d, kind, where, value)
    tmp = Path(tempfile.mkdtemp(prefix="ge-verify-fuzz-"))
    try:
        result = verifier.verify(d.write(tmp / "p"), level=3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    crashes = [str(f) for f in result.by_rule("GE000")]
    assert crashes == []
    for f in result.findings:
        assert f.severity in ("error", "warning", "info") and f.message


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=0, max_size=3))
def test_opened_store_reports_what_the_lenient_loader_reports(edits):
    """Without a store, levels 2+ check the pack on its Store.open (kept rows, the loader's
    build) when the loader takes it: the report equals the lenient loader's, clean or not."""
    d = PackDraft(TINY)
    for kind, where, value in edits:
        _apply(d, kind, where, value)
    tmp = Path(tempfile.mkdtemp(prefix="ge-verify-open-"))
    try:
        pack = d.write(tmp / "p")
        assert verifier.verify(pack, level=3).to_dict() == verifier.verify(pack, level=3, lenient=True).to_dict()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
