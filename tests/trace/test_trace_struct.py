"""Traces read as msgspec structs (``decode_trace``, what re-scoring reads) are accepted
only where ``Trace.model_validate_json`` accepts the line, and then hold the same values:
every field as the model holds it (nested models as structs). Where it does not vouch for
a line (None), the model decides."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scoring"))

from test_scoring_properties import cases  # noqa: E402

from groundeval.trace.io import trace_line  # noqa: E402
from groundeval.trace.model import Trace, decode_trace  # noqa: E402

DATETIMES = st.one_of(
    st.from_regex(
        r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]{1,9})?)?([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)?\Z"
    ),
    st.datetimes(timezones=st.none() | st.timezones()).map(lambda d: d.isoformat()),
    st.sampled_from(
        [
            "2026-02-16T23:41:41Z",
            "2026-02-16T23:41:41.1234567Z",
            "2026-02-16T23:41:60Z",
            "2026-02-16T24:00:00Z",
            "2026-02-30T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "2026-02-16T23:41:41+23:59",
            "2026-02-16T23:41:41+24:00",
            "2026-02-16T23:41:41-00:00",
            "2026-02-16T23:41:41.000001+05:30",
            "2026-02-16",
            "1700000000",
            "２０２６-02-16T23:41:41Z",
        ]
    ),
)

JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(["", "ok", "tool", "context", "horizon", "actor", "1", "x", "\u00e9"]),
        DATETIMES,
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


def _nested(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


@st.composite
def mutated(draw) -> bytes:
    """A scorer-test trace's line, with a few fields deleted, replaced by any JSON value
    (of another type, null, a near-miss literal, a datetime text, nesting near pydantic's
    limit) or added, at any depth; sometimes a repeated key or raw text."""
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
        op = draw(st.sampled_from(["delete", "set", "set", "add", "deep"]))
        if op == "delete":
            del parent[at[-1]]
        elif op == "set":
            parent[at[-1]] = draw(JSON_VALUES)
        elif op == "deep":
            parent[at[-1]] = _nested(draw(st.integers(185, 205)))
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "error", "flags", "valid", "trial"]))] = draw(JSON_VALUES)
    for key in ("as_of",):
        if draw(st.integers(0, 2)) == 0:
            data[key] = draw(DATETIMES)
    if isinstance(data.get("timings"), dict) and draw(st.booleans()):
        data["timings"][draw(st.sampled_from(["started", "ended"]))] = draw(DATETIMES)
    text = json.dumps(data, sort_keys=draw(st.booleans()), ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:
        text = text.replace("true", "1").replace("Z", "+02:00")  # lax-mode coercions
    if draw(st.integers(0, 5)) == 0:  # a repeated key: the last one counts, for both
        key = draw(st.sampled_from(['"mode":', '"valid":', '"tool":', '"trial":', '"as_of":', '"index":']))
        at = text.find(key)
        if at >= 0:
            text = text[:at] + key + json.dumps(draw(JSON_VALUES)) + "," + text[at:]
    return text.encode()


def _same_datetime(a: datetime, b: datetime) -> bool:
    return a == b and a.replace(tzinfo=None) == b.replace(tzinfo=None) and a.utcoffset() == b.utcoffset()


def _same(model: Any, struct: Any) -> None:
    """``struct`` holds what ``model`` holds: a model as a struct of the same fields."""
    if isinstance(model, BaseModel):
        assert type(struct).__name__ == type(model).__name__ + "Struct"
        assert struct.__struct_fields__ == tuple(type(model).model_fields)
        for k in type(model).model_fields:
            _same(getattr(model, k), getattr(struct, k))
    elif isinstance(model, datetime):
        assert type(struct) is datetime and _same_datetime(model, struct)
    elif isinstance(model, list):
        assert type(struct) is list and len(struct) == len(model)
        for a, b in zip(model, struct):
            _same(a, b)
    elif isinstance(model, dict):
        assert type(struct) is dict and list(struct) == list(model)
        for k in model:
            _same(model[k], struct[k])
    else:
        assert type(struct) is type(model) and (struct == model or struct != struct and model != model)


FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


def _model(line: bytes) -> Trace | None:
    try:
        return Trace.model_validate_json(line)
    except ValidationError:
        return None


@pytest.mark.slow
@FUZZ
@given(mutated())
def test_the_struct_accepts_only_what_the_model_accepts_with_the_same_values(line):
    model, struct = _model(line), decode_trace(line)
    if struct is not None:
        assert model is not None, line
        _same(model, struct)


@pytest.mark.slow
@FUZZ
@given(cases())
def test_the_struct_vouches_for_every_line_the_writer_writes(case):
    _q, trace = case
    line = trace_line(trace).encode()
    struct = decode_trace(line)
    assert struct is not None
    _same(Trace.model_validate_json(line), struct)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(DATETIMES)
def test_a_datetime_the_struct_reads_is_read_alike_by_the_model(text):
    line = json.dumps(
        {"question_id": "q", "track": "silence", "mode": "tool", "actor": None, "as_of": text, "contract_digest": "d"}
    ).encode()
    model, struct = _model(line), decode_trace(line)
    if struct is not None:
        assert model is not None and _same_datetime(model.as_of, struct.as_of), text


def test_nesting_near_pydantics_limit_is_left_to_the_model():
    base = {"question_id": "q", "track": "silence", "mode": "tool", "actor": None, "as_of": "2026-01-01T00:00:00Z"}
    for depth in range(190, 210):
        line = json.dumps({**base, "contract_digest": "d", "final_answer": {"a": _nested(depth)}}).encode()
        struct = decode_trace(line)
        assert struct is None or _model(line) is not None


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=40) | st.sampled_from([b"", b"{}", b"[]", b"null", b'{"calls": 5}', b"\xff\xfe"]))
def test_bytes_that_are_no_trace_are_refused_by_both(raw):
    assert decode_trace(raw) is None
    assert _model(raw) is None


def test_the_struct_follows_the_model():
    """Every field of the trace and of its nested models, with the model's defaults."""
    struct = decode_trace(
        b'{"question_id":"q","track":"t","mode":"tool","actor":null,"as_of":"2026-01-01T00:00:00Z","contract_digest":"d"}'
    )
    model = Trace(
        question_id="q", track="t", mode="tool", actor=None, as_of="2026-01-01T00:00:00Z", contract_digest="d"
    )
    _same(model, struct)
    assert (
        decode_trace(
            b'{"question_id":"q","track":"t","mode":"tool","as_of":"2026-01-01T00:00:00Z","contract_digest":"d"}'
        )
        is None
    )


def test_every_offset_the_struct_reads_is_read_alike_by_the_model():
    """Offsets ±00:00 to ±99:99 (``+00:60`` is refused by the model, while Python's
    ``fromisoformat`` reads it as an hour), and the times of day around their limits."""
    texts = [f"2026-02-16T23:41:41{sign}{h:02d}:{m:02d}" for sign in "+-" for h in range(100) for m in range(100)]
    texts += [f"2026-02-16T{h:02d}:{m:02d}:{s:02d}Z" for h in (0, 23, 24, 99) for m in (0, 59, 60) for s in (0, 59, 60)]
    for text in texts:
        line = json.dumps(
            {"question_id": "q", "track": "t", "mode": "tool", "actor": None, "as_of": text, "contract_digest": "d"}
        ).encode()
        struct = decode_trace(line)
        if struct is not None:
            model = _model(line)
            assert model is not None and _same_datetime(model.as_of, struct.as_of), text
