"""Issue 30 item 8 over MCP: every call an MCP client makes with its episode id — an unknown tool
name, arguments of the wrong types for each tool — is recorded in the episode as the Python API
records the same call (``Episode.call``), so the trace scores the same by either route. The
server is the real ``groundeval serve`` process, the client the real MCP SDK's."""

from __future__ import annotations

import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from runtime_mcp_helpers import serve_cmd, write_questions
from runtime_questions import at, make_question

import groundeval
from groundeval.questions.model import QuestionSet, QuestionSetMeta
from groundeval.runtime.episode import Episode
from groundeval.runtime.mcp_server import TOOL_NAMES
from groundeval.trace.io import read_traces

QUESTION = make_question(actor="carol", as_of=at(9), qid="q-vanish")

CALLS = [
    ("lookup_owner", {"team": "storage"}),  # a tool no episode has
    ("read_minds", {}),
    ("search_artifacts", {"query": 5}),
    ("search_artifacts", {"query": "checkout", "limit": "five"}),
    ("search_artifacts", {"query": "checkout", "subsystem": ["jira"]}),
    ("search_artifacts", {"query": "checkout", "shadow": True}),  # an argument the tool does not take
    ("fetch_artifact", {"artifact_id": None}),
    ("fetch_artifact", {"artifact_id": ["JIRA-42"]}),
    ("fetch_artifact", {}),
    ("submit_answer", {"answer": '{"could_actor_have_known": false}'}),  # the object as a text
    ("submit_answer", {"answer": [False]}),
    ("submit_answer", {"answer": {"could_actor_have_known": False, "evidence_artifacts": ["HR-1", "JIRA-42"]}}),
]


def _comparable(trace):
    data = trace.model_dump(mode="json")
    data.pop("timings")
    data.pop("agent", None)
    return data


def test_unknown_tools_and_wrong_types_are_recorded_as_the_python_api_records_them(tiny_pack, tiny_store, tmp_path):
    questions = write_questions(tmp_path / "questions.json", [QUESTION], tiny_store.digest)
    traces = tmp_path / "traces.jsonl"
    cmd = serve_cmd(tiny_pack, questions, "--traces", str(traces))
    params = StdioServerParameters(command=sys.executable, args=cmd[1:])

    async def main():
        unknown = []
        async with Client(params) as client:
            started = await client.call_tool("start_episode", {"question_id": QUESTION.id, "agent": "mcp"})
            eid = started.structured_content["episode_id"]
            for name, arguments in CALLS:
                try:
                    await client.call_tool(name, {"episode_id": eid, **arguments})
                except MCPError as exc:  # the specification's error for an unknown name
                    unknown.append((name, exc.code))
        return unknown

    unknown = anyio.run(main)
    assert (
        unknown
        == [(n, -32602) for n, _ in CALLS if n not in TOOL_NAMES]
        == [
            ("lookup_owner", -32602),
            ("read_minds", -32602),
        ]
    )
    with Episode(tiny_store, QUESTION, agent="python") as ep:
        for name, arguments in CALLS:
            ep.call(name, arguments)
    (served,) = read_traces(traces)
    assert [c.status for c in served.calls] == ["invalid"] * (len(CALLS) - 1) + ["ok"]
    assert [(c.tool, c.arguments) for c in served.calls] == CALLS
    assert _comparable(served) == _comparable(ep.trace)
    qs = QuestionSet(
        metadata=QuestionSetMeta(contract_digest=tiny_store.digest, pack="tiny", seed=0), questions=[QUESTION]
    )
    over_mcp, python = groundeval.score(qs, [served])[0], groundeval.score(qs, [ep.trace])[0]
    assert over_mcp.model_dump(exclude={"agent"}) == python.model_dump(exclude={"agent"})
