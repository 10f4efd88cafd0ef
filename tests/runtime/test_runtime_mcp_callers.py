"""Who may drive an MCP episode (issue 31 items 1 and 4, issue 32 item 4), through real
``groundeval serve`` processes and the real MCP SDK client.

An episode id is a capability made by each ``start_episode`` (and each ``answer_question``
prompt): two clients starting one question at once get two episodes, each recorded whole;
a client that opens a session per call finishes its episode; a bearer token never drives,
nor joins the HTTP session of, another token's episode.
"""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from mcp import Client
from runtime_mcp_helpers import http_server, write_questions
from runtime_questions import at, make_question

from groundeval.runtime.mcp_server import UNKNOWN_EPISODE
from groundeval.trace.io import read_traces

QUESTIONS = [
    make_question(actor="alice", as_of=at(5), qid="q-alice"),
    make_question(actor="carol", as_of=at(9), qid="q-carol"),
]
TOKEN_A = "token-A-0123456789abcdef"
TOKEN_B = "token-B-0123456789abcdef"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture()
def questions_file(tmp_path, tiny_store):
    return write_questions(tmp_path / "questions.json", QUESTIONS, tiny_store.digest)


def _with_token(url: str, token: str, mode: str = "auto"):
    """(http client, MCP client) sending ``Authorization: Bearer token``."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    return http, Client(streamable_http_client(url, http_client=http), mode=mode)


def _answer(known: bool) -> dict:
    return {"could_actor_have_known": known, "evidence_artifacts": []}


# ----------------------------------------------------------------------------- item 1: no shared episode


@pytest.mark.slow
def test_two_concurrent_clients_on_one_question_get_their_own_episodes(tiny_pack, questions_file, tmp_path):
    """The SDK's default (sessionless) HTTP client, no token: every caller looks the same to
    the server, and still each start is its own episode, its calls and answer recorded there."""
    traces = tmp_path / "traces.jsonl"
    started: dict[str, dict] = {}
    prompted: dict[str, tuple[str, str]] = {}

    async def one_client(url: str, name: str, both: anyio.Event, known: bool, calls: list[tuple[str, dict]]):
        async with Client(url) as client:
            if name == "two":  # starts while the first one's episode is open
                while "one" not in started:
                    await anyio.sleep(0.01)
            r = await client.call_tool("start_episode", {"question_id": "q-alice"})  # two honest, unnamed clients
            assert not r.is_error, r.structured_content
            started[name] = r.structured_content
            if len(started) == 2:
                both.set()
            await both.wait()  # both episodes are open before either calls a tool
            eid = started[name]["episode_id"]
            for tool, args in calls:
                res = await client.call_tool(tool, {"episode_id": eid, **args})
                assert res.structured_content["status"] == "ok", res.structured_content
            done = await client.call_tool("submit_answer", {"episode_id": eid, "answer": _answer(known)})
            assert done.structured_content == {"accepted": True, "status": "ok"}
            # the prompt, asked by both for one question: each gets an episode of its own
            if name == "two":
                while "one" not in prompted:
                    await anyio.sleep(0.01)
            got = await client.get_prompt("answer_question", {"question_id": "q-carol"})
            prompted[name] = (got.meta["groundeval/episode_id"], got.meta["groundeval/question_id"])
            while len(prompted) < 2:  # both prompts' episodes open at once
                await anyio.sleep(0.01)
            await client.call_tool("end_episode", {"episode_id": prompted[name][0]})

    with http_server(tiny_pack, questions_file, "--traces", str(traces)) as (url, _):

        async def main():
            both = anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(one_client, url, "one", both, True, [("fetch_artifact", {"artifact_id": "JIRA-42"})])
                tg.start_soon(
                    one_client,
                    url,
                    "two",
                    both,
                    False,
                    [("search_artifacts", {"query": "checkout"}), ("search_artifacts", {"query": "postmortem"})],
                )

        anyio.run(main)

    assert started["one"]["episode_id"] != started["two"]["episode_id"]
    assert prompted["one"][0] != prompted["two"][0]
    written = read_traces(traces)
    assert len(written) == 4 and all(t.agent is None for t in written)
    alice = [t for t in written if t.question_id == "q-alice"]
    carol = [t for t in written if t.question_id == "q-carol"]
    assert len(alice) == len(carol) == 2 and all(t.calls == [] and t.status == "no_answer" for t in carol)
    (one,) = [t for t in alice if t.calls[0].tool == "fetch_artifact"]
    (two,) = [t for t in alice if t.calls[0].tool == "search_artifacts"]
    assert [(c.tool, c.arguments) for c in one.calls] == [
        ("fetch_artifact", {"artifact_id": "JIRA-42"}),
        ("submit_answer", {"answer": _answer(True)}),
    ]
    assert [(c.tool, c.arguments.get("query")) for c in two.calls] == [
        ("search_artifacts", "checkout"),
        ("search_artifacts", "postmortem"),
        ("submit_answer", None),
    ]
    assert one.final_answer == _answer(True) and two.final_answer == _answer(False)
    assert one.status == two.status == "completed"
    assert sorted(t.trial for t in alice) == sorted(t.trial for t in carol) == [0, 1]


# ----------------------------------------------------------------------------- item 4 (31): tokens


def _post(url: str, token: str, body: dict, session: str | None = None) -> httpx.Response:
    headers = {**HEADERS, "authorization": f"Bearer {token}"}
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    return httpx.post(url, headers=headers, content=json.dumps(body), timeout=30)


def _result(resp: httpx.Response) -> dict:
    text = resp.text
    if "data:" in text:
        (msg,) = [json.loads(x[5:]) for x in text.splitlines() if x.startswith("data:") and x[5:].strip()]
        return msg
    return resp.json()


@pytest.mark.slow
def test_a_token_cannot_use_another_tokens_session_or_episode(tiny_pack, questions_file, tmp_path):
    traces = tmp_path / "traces.jsonl"
    env = {"GROUNDEVAL_MCP_TOKEN": f"{TOKEN_A},{TOKEN_B}"}
    with http_server(tiny_pack, questions_file, "--traces", str(traces), env=env) as (url, _):
        # B opens a handshake-era session and starts an episode in it
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "1"},
            },
        }
        b_session = _post(url, TOKEN_B, init).headers["mcp-session-id"]
        _post(url, TOKEN_B, {"jsonrpc": "2.0", "method": "notifications/initialized"}, b_session)
        start = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "start_episode", "arguments": {"question_id": "q-alice", "agent": "b"}},
        }
        b_episode = _result(_post(url, TOKEN_B, start, b_session))["result"]["structuredContent"]["episode_id"]

        # A with B's session id: refused as an unknown session is, before any episode is looked at
        submit = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "submit_answer", "arguments": {"episode_id": b_episode, "answer": _answer(True)}},
        }
        hijack = _post(url, TOKEN_A, submit, b_session)
        assert hijack.status_code == 404 and "Session not found" in hijack.text
        unknown_session = _post(url, TOKEN_A, submit, "0" * 32)
        assert unknown_session.status_code == 404 and unknown_session.text == hijack.text

        async def a_tries(mode: str) -> list[dict]:
            http, client = _with_token(url, TOKEN_A, mode)
            async with http, client:
                out = []
                for tool, args in [
                    ("submit_answer", {"answer": _answer(True)}),
                    ("fetch_artifact", {"artifact_id": "JIRA-42"}),
                    ("end_episode", {}),
                ]:
                    res = await client.call_tool(tool, {"episode_id": b_episode, **args})
                    out.append((res.is_error, res.structured_content))
                return out

        for mode in ("legacy", "auto"):  # its own session, and the sessionless protocol
            refusals = anyio.run(a_tries, mode)
            assert refusals == [(True, {"status": "error", "error": UNKNOWN_EPISODE})] * 3

        async def b_again() -> dict:  # B itself, from a new session: its capability works
            http, client = _with_token(url, TOKEN_B, "legacy")
            async with http, client:
                res = await client.call_tool("submit_answer", {"episode_id": b_episode, "answer": _answer(False)})
                return res.structured_content

        assert anyio.run(b_again) == {"accepted": True, "status": "ok"}
    (trace,) = read_traces(traces)
    assert trace.agent == "b" and trace.final_answer == _answer(False)
    assert [c.tool for c in trace.calls] == ["submit_answer"]  # nothing of A's recorded


# ----------------------------------------------------------------------------- item 4 (32): a session per call


@pytest.mark.slow
@pytest.mark.parametrize("token", [None, TOKEN_A])
def test_a_client_opening_a_session_per_call_finishes_its_episode(tiny_pack, questions_file, tmp_path, token):
    """As the MCP Inspector CLI does: every call in a new handshake-era session."""
    traces = tmp_path / "traces.jsonl"
    env = {"GROUNDEVAL_MCP_TOKEN": token or ""}
    with http_server(tiny_pack, questions_file, "--traces", str(traces), env=env) as (url, _):

        async def call(tool: str, args: dict) -> dict:
            if token is None:
                async with Client(url, mode="legacy") as client:
                    return (await client.call_tool(tool, args)).structured_content
            http, client = _with_token(url, token, "legacy")
            async with http, client:
                return (await client.call_tool(tool, args)).structured_content

        async def main() -> list[dict]:
            eid = (await call("start_episode", {"question_id": "q-carol", "agent": "per-call"}))["episode_id"]
            return [
                await call("search_artifacts", {"episode_id": eid, "query": "staffing"}),
                await call("fetch_artifact", {"episode_id": eid, "artifact_id": "JIRA-42"}),
                await call("submit_answer", {"episode_id": eid, "answer": _answer(True)}),
                await call("fetch_artifact", {"episode_id": eid, "artifact_id": "JIRA-42"}),  # ended
            ]

        replies = anyio.run(main)
    assert replies[0]["status"] == "ok" and replies[1] != replies[3]  # a refusal of its own, not "unknown episode"
    assert replies[2] == {"accepted": True, "status": "ok"}
    assert replies[3] == {"status": "error", "error": UNKNOWN_EPISODE}
    (trace,) = read_traces(traces)
    assert trace.status == "completed" and trace.agent == "per-call"
    assert [c.tool for c in trace.calls] == ["search_artifacts", "fetch_artifact", "submit_answer"]
