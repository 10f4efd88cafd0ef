"""Trace JSONL: canonical lines, durable appends, located errors, schema agreement."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.contract.schemas import schema_for
from groundeval.errors import ContractError
from groundeval.trace.io import append_trace, iter_trace_lines, read_traces, trace_line
from groundeval.trace.model import Submission, ToolCall, Trace


def sample(qid="q1", **kw) -> Trace:
    return Trace(
        question_id=qid,
        track="perspective",
        mode="tool",
        actor="alice",
        as_of=datetime(2026, 3, 5, tzinfo=timezone.utc),
        contract_digest="d" * 64,
        calls=[
            ToolCall(
                index=0,
                tool="fetch_artifact",
                arguments={"artifact_id": "JIRA-42", "b": "ü"},
                status="denied",
                flags=["subsystem"],
                error="no",
            )
        ],
        submissions=[Submission(call_index=1, answer={"x": 1}, valid=True, citation_flags={"A": None})],
        **kw,
    )


def test_trace_line_is_canonical():
    line = trace_line(sample())
    data = json.loads(line)
    assert "\n" not in line and ": " not in line and "ü" in line
    assert line == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert list(data) == sorted(data)


def test_trace_append_and_read_round_trip(tmp_path):
    path = tmp_path / "deep" / "traces.jsonl"
    a, b = sample("q1"), sample("q2", status="completed", final_answer={"x": 1})
    append_trace(path, a)
    append_trace(path, b)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and text.count("\n") == 2
    back = read_traces(path)
    assert [t.question_id for t in back] == ["q1", "q2"]
    assert back[0] == a and back[1] == b
    assert [trace_line(t) for t in back] == text.splitlines()


def test_trace_read_reports_file_and_line(tmp_path):
    path = tmp_path / "traces.jsonl"
    append_trace(path, sample())
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n" + json.dumps({"question_id": "q", "mode": "bogus"}) + "\n")
    with pytest.raises(ContractError) as err:
        read_traces(path)
    assert f"{path}:3" in str(err.value)
    with pytest.raises(ContractError):
        read_traces(tmp_path / "missing.jsonl")


def test_trace_lines_validate_against_published_schema(tmp_path):
    schema = schema_for("trace")
    jsonschema.Draft202012Validator(schema).validate(json.loads(trace_line(sample())))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate({**json.loads(trace_line(sample())), "mode": "x"})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=6) | st.sampled_from([b" ", b"\t", b"\x0b", b"\x0c", b"\r", b"\xa0", b"\x85"])))
def test_blank_lines_are_exactly_the_whitespace_only_lines(tmp_path_factory, chunks):
    """The line reader skips a line exactly when ``strip()`` would leave nothing of it (the
    reference rule), whatever bytes it holds; every other line comes back whole, numbered."""
    path = tmp_path_factory.mktemp("lines") / "t.jsonl"
    path.write_bytes(b"\n".join(chunks))
    got = list(iter_trace_lines(path))
    reference = [(n, ln) for n, ln in enumerate(open(path, "rb"), 1) if ln.strip()]
    assert got == reference
    assert all(ln.strip() for _n, ln in got)
