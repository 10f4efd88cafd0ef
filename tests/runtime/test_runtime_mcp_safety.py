"""Issue 13 through real ``groundeval serve`` processes and the real MCP SDK client.

Start-up refusals (non-loopback without a token, questions of another contract,
an unwritable traces path), bearer tokens, requests the SDK would drop (too deep,
lone surrogates) answered and recorded, 32 concurrent adversarial callers (one token each) that
cannot drive each other's episodes or read gated content, and an engine failure
that never leaks its text to the client.
"""

from __future__ import annotations

import json
import select
import subprocess

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from runtime_mcp_helpers import http_server, run_serve, serve_cmd, write_questions
from runtime_questions import at, make_question

from groundeval.runtime import episode as episode_module
from groundeval.runtime.episode import REFUSAL
from groundeval.runtime.mcp_server import INTERNAL_ERROR, UNKNOWN_EPISODE, EpisodeHub, build_server
from groundeval.store.cone import gate_flags
from groundeval.trace.io import read_traces
from groundeval.trace.text import unescape

QUESTIONS = [
    make_question(actor="carol", as_of=at(9), qid="q-carol"),
    make_question(actor="alice", as_of=at(5), qid="q-alice"),
    make_question("counterfactual", actor="alice", as_of=at(5), qid="q-cf"),
]
TOKEN = "s3cret-token-0123456789abcdef"


@pytest.fixture()
def questions_file(tmp_path, tiny_store):
    return write_questions(tmp_path / "questions.json", QUESTIONS, tiny_store.digest)


# ----------------------------------------------------------------------------- start-up refusals (3, 4, 5)


@pytest.mark.slow
def test_serve_refuses_a_non_loopback_host_without_allow_remote_and_token(tiny_pack, questions_file):
    code, err = run_serve(
        tiny_pack, questions_file, "--transport", "http", "--host", "0.0.0.0", env={"GROUNDEVAL_MCP_TOKEN": ""}
    )
    assert code == 2 and "--allow-remote" in err and "Traceback" not in err
    code, err = run_serve(
        tiny_pack,
        questions_file,
        "--transport",
        "http",
        "--host",
        "0.0.0.0",
        "--allow-remote",
        env={"GROUNDEVAL_MCP_TOKEN": ""},
    )
    assert code == 2 and "bearer token" in err and "GROUNDEVAL_MCP_TOKEN" in err and "Traceback" not in err
    code, err = run_serve(
        tiny_pack,
        questions_file,
        "--transport",
        "http",
        "--host",
        "0.0.0.0",
        "--allow-remote",
        env={"GROUNDEVAL_MCP_TOKEN": "short"},
    )
    assert code == 2 and "shorter than 16" in err


@pytest.mark.slow
def test_serve_refuses_questions_of_another_contract(tiny_pack, tmp_path):
    for digest in ("0" * 64, "feedface" * 8):
        qfile = write_questions(tmp_path / f"q-{digest[:4]}.json", QUESTIONS, digest)
        code, err = run_serve(tiny_pack, qfile)
        assert code == 2 and "another contract" in err and "Traceback" not in err


@pytest.mark.slow
def test_serve_refuses_an_unwritable_traces_path_at_start(tiny_pack, questions_file, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, err = run_serve(tiny_pack, questions_file, "--traces", str(blocker / "traces.jsonl"))
    assert code == 2 and "traces cannot be written" in err and "Traceback" not in err


# ----------------------------------------------------------------------------- tokens


def test_http_bearer_token_is_required_when_set(tiny_pack, questions_file, tmp_path):
    import httpx2

    traces = tmp_path / "traces.jsonl"
    with http_server(tiny_pack, questions_file, "--traces", str(traces), env={"GROUNDEVAL_MCP_TOKEN": TOKEN}) as (
        url,
        _,
    ):
        bare = httpx.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"accept": "application/json, text/event-stream"},
        )
        wrong = httpx.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"accept": "application/json, text/event-stream", "authorization": "Bearer " + TOKEN[:-1] + "X"},
        )
        assert bare.status_code == wrong.status_code == 401

        async def main():
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                qs = (await client.call_tool("list_questions", {})).structured_content["questions"]
                return [q["question_id"] for q in qs]

        assert anyio.run(main) == [q.id for q in QUESTIONS]


def test_http_host_header_checked_on_loopback(tiny_pack, questions_file):
    with http_server(tiny_pack, questions_file) as (url, _):
        evil = httpx.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"accept": "application/json, text/event-stream", "host": "evil.example:80"},
        )
        assert evil.status_code == 421


# ----------------------------------------------------------------------------- stdio: every request answered (1, 8)


def _stdio(tiny_pack, questions_file, traces):
    return subprocess.Popen(
        serve_cmd(tiny_pack, questions_file, "--traces", str(traces)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _ask(proc, line: str, timeout: float = 30) -> dict | None:
    proc.stdin.write(line.encode("utf-8") + b"\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return json.loads(proc.stdout.readline()) if ready else None


def test_stdio_answers_deep_and_surrogate_requests_and_records_them(tiny_pack, questions_file, tmp_path):
    traces = tmp_path / "traces.jsonl"
    proc = _stdio(tiny_pack, questions_file, traces)
    try:
        init = _ask(
            proc,
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "probe", "version": "1"},
                    },
                }
            ),
        )
        assert init["result"]["serverInfo"]["name"] == "groundeval"
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        deep = (
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_questions","arguments":{"a":'
            + "[" * 3000
            + "]" * 3000
            + "}}}"
        )
        reply = _ask(proc, deep)
        assert reply["id"] == 2 and reply["error"]["code"] == -32600
        assert _ask(proc, '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":')["id"] == 3  # truncated
        started = _ask(
            proc,
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "start_episode", "arguments": {"question_id": "q-alice"}},
                }
            ),
        )
        eid = started["result"]["structuredContent"]["episode_id"]
        # JSON text with lone surrogate escapes, as an OpenAI-compatible server may produce
        calls = [
            '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fetch_artifact","arguments":'
            '{"episode_id":"%s","artifact_id":"PM-42\\ud800"}}}' % eid,
            '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search_artifacts","arguments":'
            '{"episode_id":"%s","query":"x \\udfff \\\\ok"}}}' % eid,
            '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"submit_answer","arguments":'
            '{"episode_id":"%s","answer":{"could_actor_have_known":true,"evidence_artifacts":["\\ud83d"]}}}}' % eid,
        ]
        replies = [_ask(proc, c) for c in calls]
        for n, r in zip((5, 6, 7), replies):
            assert r["id"] == n and r["result"]["structuredContent"]["status"] == "invalid"
            assert "lone surrogate" in r["result"]["structuredContent"]["error"]
        done = _ask(
            proc,
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 8,
                    "method": "tools/call",
                    "params": {
                        "name": "submit_answer",
                        "arguments": {"episode_id": eid, "answer": {"could_actor_have_known": True}},
                    },
                }
            ),
        )
        assert done["result"]["structuredContent"] == {"accepted": True, "status": "ok"}
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    (trace,) = read_traces(traces)
    assert [c.status for c in trace.calls] == ["invalid", "invalid", "invalid", "ok"]
    assert unescape(trace.calls[0].arguments["artifact_id"]) == "PM-42\ud800"
    assert unescape(trace.calls[1].arguments["query"]) == "x \udfff \\ok"
    assert "_groundeval_escaped" not in trace.calls[0].arguments
    assert (
        trace.submissions[0].valid is False
        and unescape(trace.submissions[0].answer["evidence_artifacts"][0]) == "\ud83d"
    )
    assert trace.status == "completed"


# ----------------------------------------------------------------------------- 32 adversarial sessions over HTTP (4, 9)


def _gated_bodies(store, q) -> list[str]:
    from groundeval.runtime.search_sql import fetch_index

    ids = sorted(fetch_index(store).meta)
    flags = gate_flags(store, q.actor, q.as_of, ids, q.gates)
    out = []
    for aid in ids:
        if flags[aid]:
            record = store.artifact_record(aid) or {}
            out += [
                v for k, v in record.items() if k in ("body", "title", "text") and isinstance(v, str) and len(v) > 8
            ]
    return out


@pytest.mark.slow
def test_32_concurrent_callers_cannot_drive_each_other_or_read_gated_content(
    tiny_pack, tiny_store, questions_file, tmp_path
):
    """32 sessions, each with its own bearer token: every one tries every other's episode id."""
    traces = tmp_path / "traces.jsonl"
    n = 32
    by_id = {q.id: q for q in QUESTIONS}
    gated = {q.id: _gated_bodies(tiny_store, q) for q in QUESTIONS}
    assert all(gated.values())
    episodes: dict[int, str] = {}
    results: dict[int, dict] = {}

    tokens = [f"token-{i:02d}-{'x' * 16}" for i in range(n)]  # one caller per session

    async def session(i: int, url: str, all_started: anyio.Event, counter: list[int]) -> None:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        qid = QUESTIONS[i % len(QUESTIONS)].id
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens[i]}"})
        async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            r = (await client.call_tool("start_episode", {"question_id": qid, "agent": f"s{i}"})).structured_content
            episodes[i] = r["episode_id"]
            counter[0] += 1
            if counter[0] == n:
                all_started.set()
            await all_started.wait()
            eid = episodes[i]
            own = [
                ("fetch_artifact", {"artifact_id": "HR-1"}),
                ("fetch_artifact", {"artifact_id": "JIRA-42"}),
                ("fetch_artifact", {"artifact_id": "PM-41"}),
                ("fetch_artifact", {"artifact_id": "NOPE-1"}),
                ("search_artifacts", {"query": "'; DROP TABLE artifacts; -- postmortem staffing " * 20}),
                ("search_artifacts", {"query": "INC-42", "subsystem": "hr"}),
                ("search_artifacts", {"query": "x" * 5000}),
                ("teleport", {"to": "hr"}),
            ]
            replies = []
            for tool, args in own:
                try:
                    res = await client.call_tool(tool, {"episode_id": eid, **args})
                except MCPError as exc:  # the spec's unknown-tool error; still recorded in the episode
                    assert tool == "teleport" and exc.code == -32602
                    continue
                assert res.is_error == (res.structured_content["status"] != "ok")
                replies.append(res.structured_content)
            # try to drive every other session's episode
            cross = []
            for j in range(n):
                if j == i:
                    continue
                res = await client.call_tool(
                    "submit_answer", {"episode_id": episodes[j], "answer": {"could_actor_have_known": True}}
                )
                cross.append((res.is_error, res.structured_content))
                res = await client.call_tool("end_episode", {"episode_id": episodes[j]})
                cross.append((res.is_error, res.structured_content))
            unknown = await client.call_tool("end_episode", {"episode_id": "f" * 32})
            done = await client.call_tool(
                "submit_answer", {"episode_id": eid, "answer": {"could_actor_have_known": False}}
            )
            results[i] = {
                "qid": qid,
                "replies": replies,
                "cross": cross,
                "unknown": unknown.structured_content,
                "done": done.structured_content,
                "calls": len(own) + 1,
            }

    env = {"GROUNDEVAL_MCP_TOKEN": ",".join(tokens)}
    with http_server(tiny_pack, questions_file, "--traces", str(traces), env=env) as (url, _):

        async def main():
            all_started = anyio.Event()
            counter = [0]
            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(session, i, url, all_started, counter)

        anyio.run(main)

    assert len(results) == n
    for i, r in results.items():
        q = by_id[r["qid"]]
        assert r["done"] == {"accepted": True, "status": "ok"}
        # another session's episode answers exactly like an id that does not exist
        assert all(is_error and reply == r["unknown"] for is_error, reply in r["cross"])
        assert r["unknown"] == {"status": "error", "error": UNKNOWN_EPISODE}
        text = json.dumps(r["replies"])
        assert not any(body in text for body in gated[q.id]), (i, q.id)
        refusals = [x for x in r["replies"][:4] if x["status"] != "ok"]
        assert refusals and all(x == {"status": "not_found", "error": REFUSAL} for x in refusals)
    written = read_traces(traces, unique=False)
    assert len(written) == n
    for t in written:
        i = int(t.agent[1:])
        assert t.status == "completed" and len(t.calls) == results[i]["calls"]  # no foreign call recorded
        assert t.final_answer == {"could_actor_have_known": False}


# ----------------------------------------------------------------------------- engine failures stay inside (2)


def test_internal_error_never_reaches_the_mcp_client(tiny_store, monkeypatch, tmp_path):
    def broken(*args, **kwargs):
        raise KeyError("postmortem")

    monkeypatch.setattr(episode_module, "search_rows", broken)  # fault injection: an engine bug
    told: list[str] = []
    hub = EpisodeHub(tiny_store, QUESTIONS, traces=tmp_path / "traces.jsonl", report=told.append)

    async def main():
        async with Client(build_server(hub, "stdio")) as client:
            eid = (await client.call_tool("start_episode", {"question_id": "q-alice"})).structured_content["episode_id"]
            res = await client.call_tool("search_artifacts", {"episode_id": eid, "query": "postmortem"})
            end = await client.call_tool("end_episode", {"episode_id": eid})
            return res, end

    res, end = anyio.run(main)
    assert res.structured_content["status"] == "error"
    assert "postmortem" not in json.dumps(res.structured_content) and "KeyError" not in res.content[0].text
    assert not end.is_error
    (trace,) = read_traces(tmp_path / "traces.jsonl")
    assert trace.calls[0].status == "error" and "KeyError" in trace.calls[0].error


def test_hub_internal_failure_is_a_generic_tool_error(tiny_store, monkeypatch):
    told: list[str] = []
    hub = EpisodeHub(tiny_store, QUESTIONS, report=told.append)

    def broken(self, *args, **kwargs):
        raise RuntimeError("secret path /srv/private")

    monkeypatch.setattr(EpisodeHub, "list_questions", broken)

    async def main():
        async with Client(build_server(hub, "stdio")) as client:
            return await client.call_tool("list_questions", {})

    res = anyio.run(main)
    assert res.is_error and res.structured_content == {"status": "error", "error": INTERNAL_ERROR}
    assert told and "secret path" in told[0]  # the operator sees it, the client does not


def _sse_or_json(resp: httpx.Response) -> list[dict]:
    text = resp.text
    if "data:" in text:
        return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return [resp.json()]


def test_http_answers_deep_and_surrogate_requests_and_records_them(tiny_pack, questions_file, tmp_path):
    """Raw HTTP (what the SDK client cannot even send): the body guard in front of the SDK."""
    traces = tmp_path / "traces.jsonl"
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with http_server(tiny_pack, questions_file, "--traces", str(traces)) as (url, _):
        init = httpx.post(
            url,
            headers=headers,
            content=json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            ),
        )
        h = {**headers, "mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        httpx.post(url, headers=h, content='{"jsonrpc":"2.0","method":"notifications/initialized"}')
        started = _sse_or_json(
            httpx.post(
                url,
                headers=h,
                content=json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "tools/call",
                        "params": {"name": "start_episode", "arguments": {"question_id": "q-alice"}},
                    }
                ),
            )
        )
        eid = started[0]["result"]["structuredContent"]["episode_id"]
        raw = (
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fetch_artifact","arguments":'
            '{"episode_id":"%s","artifact_id":"PM-42\\ud800"}}}' % eid
        )
        (reply,) = _sse_or_json(httpx.post(url, headers=h, content=raw))
        assert reply["id"] == 3 and reply["result"]["structuredContent"]["status"] == "invalid"
        deep = (
            '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_questions","arguments":{"a":'
            + "[" * 3000
            + "]" * 3000
            + "}}}"
        )
        (reply,) = _sse_or_json(httpx.post(url, headers=h, content=deep))
        assert reply["id"] == 4 and reply["error"]["code"] == -32600
        httpx.post(
            url,
            headers=h,
            content=json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "end_episode", "arguments": {"episode_id": eid}},
                }
            ),
        )
    (trace,) = read_traces(traces)
    assert trace.calls[0].status == "invalid" and unescape(trace.calls[0].arguments["artifact_id"]) == "PM-42\ud800"
