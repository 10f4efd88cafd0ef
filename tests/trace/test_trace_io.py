"""Trace JSONL: canonical lines, durable appends, located errors, schema agreement."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import jsonschema
import pytest

from groundeval.contract.schemas import schema_for
from groundeval.errors import ContractError
from groundeval.trace.io import append_trace, read_traces, trace_line
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
