"""Traces validated into plain data (``trace_data_adapter``, what re-scoring reads) accept
exactly the lines ``Trace.model_validate_json`` accepts, and hold the same values: every
field the line sets, as the model holds it (nested models as dicts), and no other."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scoring"))

from test_scoring_properties import cases  # noqa: E402

from groundeval.trace.io import trace_line  # noqa: E402
from groundeval.trace.model import Trace, trace_data_adapter  # noqa: E402

JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(["", "ok", "tool", "context", "horizon", "actor", "2026-01-02T03:04:05Z", "1", "x"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "ok", "index"]), inner)),
    max_leaves=6,
)


def _paths(value: Any, at: tuple = ()) -> list[tuple]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*at, i))
    return out


@st.composite
def mutated(draw) -> bytes:
    """A scorer-test trace's line, with a few fields deleted, replaced by any JSON value
    (of another type, null, a near-miss literal) or added, at any depth; sometimes raw text."""
    _q, trace = draw(cases())
    data = json.loads(trace_line(trace))
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(data)
        at = draw(st.sampled_from(paths))
        if not at:
            continue
        parent = data
        for k in at[:-1]:
            parent = parent[k]
        op = draw(st.sampled_from(["delete", "set", "add"]))
        if op == "delete":
            del parent[at[-1]]
        elif op == "set":
            parent[at[-1]] = draw(JSON_VALUES)
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "error", "flags", "valid", "trial"]))] = draw(JSON_VALUES)
    text = json.dumps(data, sort_keys=draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:
        text = text.replace("true", "1").replace("Z", "+02:00")  # lax-mode coercions
    return text.encode()


def _same(model: Any, data: Any) -> None:
    """``data`` holds what ``model`` holds: a model as a dict of exactly its set fields."""
    if isinstance(model, BaseModel):
        assert type(data) is dict and set(data) == model.model_fields_set
        for k, v in data.items():
            _same(getattr(model, k), v)
    elif isinstance(model, list):
        assert type(data) is list and len(data) == len(model)
        for a, b in zip(model, data):
            _same(a, b)
    elif isinstance(model, dict):
        assert type(data) is dict and list(data) == list(model)
        for k in model:
            _same(model[k], data[k])
    else:
        assert type(data) is type(model) and (data == model or data != data and model != model)


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(mutated())
def test_plain_data_accepts_what_the_model_accepts_with_the_same_values(line):
    try:
        model = Trace.model_validate_json(line)
    except ValidationError:
        model = None
    try:
        data = trace_data_adapter().validate_json(line)
    except ValidationError:
        data = None
    assert (model is None) == (data is None), line
    if model is not None:
        _same(model, data)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=40) | st.sampled_from([b"", b"{}", b"[]", b"null", b'{"calls": 5}', b"\xff\xfe"]))
def test_bytes_that_are_no_trace_are_refused_by_both(raw):
    for parse in (Trace.model_validate_json, trace_data_adapter().validate_json):
        try:
            parse(raw)
        except ValidationError:
            continue
        raise AssertionError(raw)


def test_the_data_type_follows_the_model():
    """Every field of the trace and of its nested models, required where the model requires it."""
    schema = trace_data_adapter().json_schema()
    assert set(schema["properties"]) == set(Trace.model_fields)
    assert set(schema["required"]) == {n for n, f in Trace.model_fields.items() if f.is_required()}
    assert schema["additionalProperties"] is False
    assert schema["properties"]["trial"]["minimum"] == 0
    assert set(schema["$defs"]) == {"ToolCallData", "SubmissionData", "TimingsData"}
