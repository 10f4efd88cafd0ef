"""The shape checks validate one record per verdict key and trust a valid verdict for every
record with that key (``verifier.rules.shape._structure_key``): the findings must be exactly
those of validating every record with the JSON Schema (the reference path)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval import verifier
from groundeval.verifier.rules import shape
from verifier_drafts import TINY, PackDraft

# Few distinct values, so that records often share a verdict key (what the cache is for).
scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, 1, -2, 1.0, 2.5, 10**20]),
    st.sampled_from(["", " ", "x", "alice", "2026-03-01T00:00:00Z", "not a time", "JIRA-1"]),
)
value = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["actors", "roles", "jira", "slack", "k", "id"]), inner, max_size=3),
    ),
    max_leaves=5,
)
EVENT_KEYS = ["id", "type", "timestamp", "actors", "artifact_ids", "facts", "extra"]
ARTIFACT_KEYS = ["id", "subsystem", "timestamp", "created_at", "date", "title", "actors", "visibility", "body"]


def record(keys: list[str]):
    return st.dictionaries(st.sampled_from(keys), value, max_size=len(keys))


def _reference(name: str, instance) -> list:
    """Every violation, the validator run on this very record."""
    return sorted(
        ((tuple(e.absolute_path), shape._short(e.message)) for e in _errors(name, instance)),
        key=lambda e: (shape.json_path(e[0]), e[1]),
    )


def _errors(name, instance):
    from jsonschema.exceptions import best_match

    for err in shape.validator(name).iter_errors(instance):
        yield (best_match(err.context) or err) if err.context else err


@pytest.fixture
def fresh_cache(monkeypatch):
    monkeypatch.setattr(shape, "_VALID_STRUCTURES", {})


@pytest.mark.slow
@pytest.mark.parametrize("name,keys", [("event", EVENT_KEYS), ("artifact", ARTIFACT_KEYS)])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cached_verdicts_equal_the_validator(fresh_cache, name, keys, data):
    base = {"id": "e1", "type": "t", "timestamp": "2026-03-01T00:00:00Z", "subsystem": "jira", "title": "x"}
    records = data.draw(st.lists(st.one_of(record(keys), record(keys).map(lambda r: {**base, **r})), max_size=30))
    shape._VALID_STRUCTURES.clear()
    for r in records:  # in order: a valid record's key is cached, later records may hit it
        assert shape.schema_errors(name, r) == _reference(name, r)


def test_the_key_ignores_values_and_unnamed_keys():
    key = shape._structure_key("event")
    a = {"id": "a", "type": "t", "timestamp": "x", "facts": {"deep": [1, {"x": None}]}, "other": [1]}
    b = {"id": "b", "type": "u", "timestamp": "y", "facts": {}, "other": "text"}
    assert key(a) == key(b)
    assert key(a) != key({**a, "actors": ["x", None]}) != key({**a, "actors": ["x"]})
    assert key({**a, "artifact_ids": {"j": ["A", 1]}}) != key({**a, "artifact_ids": {"j": ["A"]}})


def test_a_schema_beyond_types_and_keys_has_no_key():
    assert shape._structure_key("manifest") is None  # enum, minimum, ...: every manifest is validated


# --------------------------------------------------------------------------- whole packs

edit = st.one_of(
    st.tuples(st.just("event"), st.integers(0, 12), st.sampled_from(EVENT_KEYS), value),
    st.tuples(st.just("artifact"), st.integers(0, 12), st.sampled_from(ARTIFACT_KEYS), value),
    st.tuples(st.just("event_line"), st.integers(0, 12), st.just(""), st.sampled_from(["{", "[1]", '{"id": 1,}'])),
)


def edited_draft(edits) -> PackDraft:
    """The tiny pack with ``edit`` values applied: fields set on events and artifacts, raw lines inserted."""
    d = PackDraft(TINY)
    for kind, i, key, v in edits:
        if kind == "event" and isinstance(d.events[i % len(d.events)], dict):
            d.events[i % len(d.events)][key] = v
        elif kind == "artifact":
            rel = sorted(d.artifacts)[i % len(d.artifacts)]
            if isinstance(d.artifacts[rel], dict):
                d.artifacts[rel][key] = v
        elif kind == "event_line":
            d.events.insert(i % (len(d.events) + 1), v)
    return d


def _verify(pack: Path, cached: bool, monkeypatch) -> dict:
    monkeypatch.setattr(shape, "_VALID_STRUCTURES", {})
    if not cached:
        monkeypatch.setattr(shape, "_structure_key", lambda name: None)
    try:
        return verifier.verify(pack, level=2).to_dict()
    finally:
        monkeypatch.undo()


@pytest.mark.slow
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(edit, min_size=1, max_size=8))
def test_pack_findings_equal_the_reference_path(monkeypatch, edits):
    d = edited_draft(edits)
    tmp = Path(tempfile.mkdtemp(prefix="ge-shape-cache-"))
    try:
        pack = d.write(tmp / "p")
        fast = _verify(pack, True, monkeypatch)
        reference = _verify(pack, False, monkeypatch)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert json.dumps(fast, sort_keys=True) == json.dumps(reference, sort_keys=True)
