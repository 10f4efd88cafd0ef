"""Importing recorded runs: OTLP JSON, the SDK's span JSON, concatenated exports, groundeval
traces; malformed spans become located problems, never exceptions; same spans, same bytes."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.errors import ContractError
from groundeval.observe import read_runs, run_json
from groundeval.tasks.draft import draft_contract
from groundeval.observe.otel import runs_from_documents
from groundeval.tasks import dump_contract, example

RUNS = example("support") / "runs"
REPO = Path(__file__).resolve().parents[2]


def _otlp(name: str) -> dict:
    return json.loads((RUNS / name).read_text())


def _spans(doc: dict) -> list[dict]:
    return doc["resourceSpans"][0]["scopeSpans"][0]["spans"]


def _plain(v: dict):
    ((kind, x),) = v.items()
    return {"intValue": int, "doubleValue": float}.get(kind, lambda y: y)(x)


def _sdk_form(span: dict) -> dict:
    """A span as ``ReadableSpan.to_json()`` writes it: flat attributes, 0x ids, ISO times."""
    from datetime import datetime, timezone

    ns = int(span["startTimeUnixNano"])
    iso = datetime.fromtimestamp(ns // 10**9, timezone.utc).replace(microsecond=(ns % 10**9) // 1000)
    return {
        "name": span["name"],
        "context": {"trace_id": "0x" + span["traceId"], "span_id": "0x" + span["spanId"]},
        "parent_id": "0x" + span["parentSpanId"] if span.get("parentSpanId") else None,
        "start_time": iso.isoformat().replace("+00:00", "Z"),
        "status": {"status_code": "UNSET"},
        "attributes": {a["key"]: _plain(a["value"]) for a in span["attributes"]},
    }


def test_sdk_json_and_console_concatenation_import_like_otlp(tmp_path):
    (want,) = read_runs(RUNS / "pass.json")
    sdk = [_sdk_form(s) for s in _spans(_otlp("pass.json"))]
    (tmp_path / "pass.json").write_text(json.dumps(sdk))
    (tmp_path / "console.txt").write_text("\n".join(json.dumps(s, indent=4) for s in sdk))
    for f in ("pass.json", "console.txt"):
        (got,) = read_runs(tmp_path / f)
        assert got.problems == []
        assert got.model_dump(exclude={"run_id"}) == want.model_dump(exclude={"run_id"})


def test_span_and_attribute_order_never_change_the_bytes(tmp_path):
    doc = _otlp("double_refund.json")
    spans = _spans(doc)
    for i, seed in enumerate((1, 2, 3)):
        rnd = random.Random(seed)
        rnd.shuffle(spans)
        for s in spans:
            rnd.shuffle(s["attributes"])
        (tmp_path / f"r{i}.json").write_text(json.dumps(doc))
    texts = {run_json(read_runs(tmp_path / f"r{i}.json")[0]).replace(f'"r{i}"', '"r"') for i in range(3)}
    assert len(texts) == 1
    (run,) = read_runs(tmp_path / "r0.json")
    assert [c.tool for c in run.calls] == [
        "lookup_order",
        "lookup_order",
        "lookup_policy",
        "issue_refund",
        "issue_refund",
    ]


def test_several_traces_in_one_file_are_several_runs(tmp_path):
    a, b = _otlp("pass.json"), _otlp("outside_role.json")
    (tmp_path / "both.jsonl").write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n")
    runs = read_runs(tmp_path / "both.jsonl")
    assert [r.run_id.split("#")[0] for r in runs] == ["both", "both"] and len({r.run_id for r in runs}) == 2
    assert [len(r.calls) for r in runs] == [4, 3]


def test_malformed_spans_are_located_problems(tmp_path):
    doc = _otlp("pass.json")
    spans = _spans(doc)
    tool = next(s for s in spans if s["name"] == "execute_tool lookup_policy")
    next(a for a in tool["attributes"] if a["key"] == "gen_ai.tool.call.arguments")["value"] = {
        "stringValue": "{topic: refunds"
    }
    spans[1]["attributes"].append({"key": "bad", "value": {"weirdValue": 1}})
    spans.append("not a span")
    spans.append(
        {"traceId": spans[0]["traceId"], "spanId": "ff", "parentSpanId": "ee", "name": "x", "startTimeUnixNano": "soon"}
    )
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    (run,) = read_runs(tmp_path / "bad.json")
    where = [p.where for p in run.problems]
    assert any("spans[1] attributes[" in w for w in where)
    assert any(w.endswith(f"spans[{len(spans) - 2}]") for w in where)  # the string "span"
    assert any("execute_tool lookup_policy" in w for w in where)
    assert sum("parent span ee" in p.message for p in run.problems) == 1
    assert all(str(tmp_path / "bad.json") in w for w in where)
    policy = next(c for c in run.calls if c.tool == "lookup_policy")
    assert policy.arguments == {"_raw": "{topic: refunds"}
    assert len(run.calls) == 4  # the rest of the run is intact


def test_not_json_is_a_located_error(tmp_path):
    (tmp_path / "x.json").write_text('[\n{"name": "a"},\n{nope}\n]')
    with pytest.raises(ContractError) as exc:
        read_runs(tmp_path / "x.json")
    (p,) = exc.value.problems
    assert p.line == 3 and p.file == str(tmp_path / "x.json")
    (tmp_path / "empty.json").write_text("  \n")
    with pytest.raises(ContractError):
        read_runs(tmp_path / "empty.json")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "spanId",
                    "traceId",
                    "parentSpanId",
                    "attributes",
                    "key",
                    "value",
                    "stringValue",
                    "intValue",
                    "kvlistValue",
                    "values",
                    "status",
                    "code",
                    "startTimeUnixNano",
                    "start_time",
                    "context",
                    "resourceSpans",
                    "scopeSpans",
                    "spans",
                    "gen_ai.operation.name",
                    "gen_ai.tool.call.arguments",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(JSON, min_size=1, max_size=3))
def test_any_json_imports_without_raising(docs):
    runs = runs_from_documents(docs, "fuzz.json")
    assert runs and all(r.source == "otel" for r in runs)
    json.loads(run_json(runs[0]))


def test_groundeval_traces_import_as_runs(tmp_path):
    from groundeval.trace.model import ToolCall, Trace

    t = Trace(
        question_id="q1",
        track="silence",
        mode="tool",
        actor="a",
        as_of="2026-01-01T00:00:00Z",
        contract_digest="d",
        agent="oracle",
        calls=[
            ToolCall(index=0, tool="search_artifacts", arguments={"query": "x"}, status="ok", result_ids=["A1"]),
            ToolCall(index=1, tool="fetch_artifact", arguments={"artifact_id": "A9"}, status="not_found"),
        ],
        final_answer={"exists": False},
    )
    (tmp_path / "traces.jsonl").write_text(t.model_dump_json() + "\n")
    (run,) = read_runs(tmp_path / "traces.jsonl")
    assert run.source == "trace" and [c.tool for c in run.calls] == ["search_artifacts", "fetch_artifact"]
    assert [c.status for c in run.calls] == ["ok", "error"] and run.final_answer == {"exists": False}
    draft = draft_contract([run], task="q1")
    assert list(draft.roles) == ["oracle"] and not draft.reviewed


def test_draft_bytes_do_not_depend_on_hash_seed(tmp_path):
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "groundeval.cli.main",
                "observe",
                str(RUNS / "double_refund.json"),
                "--out",
                str(out),
            ],
            check=True,
            env=env,
            cwd=tmp_path,
            capture_output=True,
        )
        outs.append(((out / "task.yaml").read_bytes(), (out / "review.md").read_bytes()))
    assert outs[0] == outs[1]
    runs = read_runs(RUNS / "double_refund.json")
    assert dump_contract(draft_contract(runs)) == dump_contract(draft_contract(runs))
    # the double refund is observed, so once-per is not inferred and the draft says so by omission
    assert draft_contract(runs).tools["issue_refund"].once_per is None


def test_observe_cli_lists_recording_problems_in_the_review(tmp_path, capsys):
    from groundeval.cli.main import main

    doc = _otlp("pass.json")
    _spans(doc).append({"traceId": _spans(doc)[0]["traceId"], "spanId": "ab", "name": 7})
    (tmp_path / "odd.json").write_text(json.dumps(doc))
    main(["observe", str(tmp_path / "odd.json"), "--out", str(tmp_path / "d")])  # exit 0: problems are data
    assert "1 problem(s)" in capsys.readouterr().out
    review = (tmp_path / "d" / "review.md").read_text()
    assert "## Problems reading the recording" in review and "span has no name" in review
    assert f"{tmp_path / 'odd.json'}: document 1" in review
