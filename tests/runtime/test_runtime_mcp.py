"""Whole episodes through the real MCP SDK client, over stdio and streamable HTTP.

The server is the real ``groundeval serve`` process; the traces it writes must equal
the traces the Python API records for the same calls (timings aside).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import anyio
import jsonschema
import pytest
from runtime_questions import at, make_question
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from groundeval.contract.schemas import schema_for
from groundeval.questions.model import QuestionSet, QuestionSetMeta
from groundeval.runtime.episode import Episode
from groundeval.runtime.mcp_server import TOOL_NAMES
from groundeval.trace.io import read_traces

QUESTIONS = [
    make_question(actor="carol", as_of=at(9), qid="q-carol"),
    make_question(actor="dave", as_of=at(5), qid="q-dave"),
    make_question("counterfactual", actor="alice", as_of=at(5), qid="q-cf"),
]

# (question, calls): gated fetches, a not-found id, a wrong type, an invalid then a valid answer
SCRIPTS = {
    "q-carol": [
        ("search_artifacts", {"query": "staffing INC-42", "limit": 5}),
        ("search_artifacts", {"query": "checkout", "subsystem": "jira"}),
        ("fetch_artifact", {"artifact_id": "JIRA-42"}),
        ("fetch_artifact", {"artifact_id": "HR-1"}),
        ("fetch_artifact", {"artifact_id": "../../etc/passwd"}),
        ("fetch_artifact", {"artifact_id": 7}),
        ("teleport", {"where": "jira"}),
        ("submit_answer", {"answer": {"could_actor_have_known": "maybe"}}),
        ("submit_answer", {"answer": {"could_actor_have_known": False, "evidence_artifacts": ["HR-1", "JIRA-42"]}}),
    ],
    "q-dave": [
        ("search_artifacts", {"query": "checkout incident"}),
        ("fetch_artifact", {"artifact_id": "JIRA-42"}),
        ("fetch_artifact", {"artifact_id": "dm-bob-alice"}),
        ("submit_answer", {"answer": {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}}),
    ],
    "q-cf": [
        ("fetch_artifact", {"artifact_id": "PM-41"}),
        ("fetch_artifact", {"artifact_id": "JIRA-42"}),
        ("submit_answer", {"answer": {"could_actor_have_known": True}}),
    ],
}


def comparable(trace):
    data = trace.model_dump(mode="json")
    data.pop("timings")
    return data


def python_traces(store):
    out = {}
    for q in QUESTIONS:
        with Episode(store, q, agent="mcp-test") as ep:
            replies = [ep.call(tool, args) for tool, args in SCRIPTS[q.id]]
        # over MCP an unknown tool is the spec's protocol error (the call is still recorded)
        replies = [UNKNOWN if tool not in TOOL_NAMES else r for (tool, _), r in zip(SCRIPTS[q.id], replies)]
        out[q.id] = (comparable(ep.trace), replies)
    return out


UNKNOWN = ("protocol error", -32602)


async def drive(client, qid):
    started = (await client.call_tool("start_episode", {"question_id": qid, "agent": "mcp-test"})).structured_content
    assert started["text"] and started["answer_schema"]["type"] == "object"
    assert "ground_truth" not in started
    eid = started["episode_id"]
    output_schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
    replies = []
    for tool, args in SCRIPTS[qid]:
        try:
            result = await client.call_tool(tool, {"episode_id": eid, **args})
        except MCPError as exc:
            assert tool not in TOOL_NAMES and exc.code == -32602 and exc.message == f"Unknown tool: {tool}"
            replies.append(UNKNOWN)
            continue
        # refused or invalid calls are tool results flagged isError, with the reason
        assert result.is_error == (result.structured_content["status"] != "ok"), (tool, result)
        if result.is_error:
            assert result.structured_content["error"]
        jsonschema.validate(result.structured_content, output_schemas[tool])
        replies.append(result.structured_content)
    after = await client.call_tool("fetch_artifact", {"episode_id": eid, "artifact_id": "HR-1"})
    assert after.is_error  # the episode ended with the valid answer; its trace is written
    return replies


async def session(client):
    listed = {t.name for t in (await client.list_tools()).tools}
    assert {"list_questions", "start_episode", "search_artifacts", "fetch_artifact", "submit_answer"} <= listed
    qs = (await client.call_tool("list_questions", {})).structured_content["questions"]
    assert [q["question_id"] for q in qs] == [q.id for q in QUESTIONS]
    bad = await client.call_tool("start_episode", {"question_id": "nope"})
    assert bad.is_error
    replies = {}

    async def one(qid):
        replies[qid] = await drive(client, qid)

    async with anyio.create_task_group() as tg:  # episodes run at once
        for q in QUESTIONS:
            tg.start_soon(one, q.id)
    return replies


@pytest.fixture()
def questions_file(tmp_path, tiny_store):
    path = tmp_path / "questions.json"
    qs = QuestionSet(
        metadata=QuestionSetMeta(contract_digest=tiny_store.digest, pack="tiny", seed=0), questions=QUESTIONS
    )
    path.write_text(qs.model_dump_json(), encoding="utf-8")
    return path


def serve_args(tiny_pack, questions_file, traces, *extra):
    return [
        "-m",
        "groundeval.cli.main",
        "serve",
        str(tiny_pack),
        "--questions",
        str(questions_file),
        "--traces",
        str(traces),
        *extra,
    ]


def check(tiny_store, traces_path, replies):
    validator = jsonschema.Draft202012Validator(schema_for("trace"))
    for line in traces_path.read_text(encoding="utf-8").splitlines():
        validator.validate(json.loads(line))  # the published contract describes what the server writes
    expected = python_traces(tiny_store)
    written = {t.question_id: comparable(t) for t in read_traces(traces_path)}
    assert sorted(written) == sorted(expected)
    for qid, (trace, py_replies) in expected.items():
        assert written[qid] == trace
        assert replies[qid] == py_replies
    carol = written["q-carol"]
    assert [c["status"] for c in carol["calls"]] == [
        "ok",
        "denied",
        "denied",
        "ok",
        "not_found",
        "invalid",
        "invalid",
        "invalid",
        "ok",
    ]
    assert carol["status"] == "completed" and carol["submissions"][0]["valid"] is False


def test_runtime_mcp_stdio(tiny_pack, tiny_store, questions_file, tmp_path):
    traces = tmp_path / "traces.jsonl"
    params = StdioServerParameters(command=sys.executable, args=serve_args(tiny_pack, questions_file, traces))

    async def main():
        async with Client(params) as client:
            return await session(client)

    replies = anyio.run(main)
    check(tiny_store, traces, replies)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_runtime_mcp_streamable_http(tiny_pack, tiny_store, questions_file, tmp_path):
    traces = tmp_path / "traces.jsonl"
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, *serve_args(tiny_pack, questions_file, traces, "--transport", "http", "--port", str(port))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)

        async def main():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return await session(client)

        replies = anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    check(tiny_store, traces, replies)
