"""A real MCP client completes world episodes over stdio and streamable HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from groundeval.worlds import load_world  # noqa: E402
from groundeval.worlds.run import read_traces  # noqa: E402
from groundeval.worlds.verdict import verdict  # noqa: E402

SHOP = Path(__file__).resolve().parent / "shop"


def _args(traces: Path, *extra: str) -> list[str]:
    return ["-m", "groundeval.cli.main", "worlds", "serve", str(SHOP), "--traces", str(traces), *extra]


async def _drive(client) -> dict:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"start_episode", "say", "end_episode", "get_order", "refund_order"} <= set(tools)
    assert tools["get_order"].annotations.read_only_hint is True
    assert tools["refund_order"].annotations.destructive_hint is True
    start = (await client.call_tool("start_episode", {"task_id": "refund-damaged", "agent": "mcp"})).structured_content
    eid = start["episode_id"]
    assert start["opening"].startswith("Hi, my blender")

    async def call(name, **args):
        return await client.call_tool(name, {"episode_id": eid, **args})

    facts = (await call("say", text="What is your order number?")).structured_content["reply"]
    assert facts == "order_id: O-1001"
    bad = await call("get_order", order_id=1001)  # a wrong type: an error result, recorded
    assert bad.is_error
    ghost = await call("wipe_orders", order_id="O-1001")  # no such tool: an error result, recorded too
    assert ghost.is_error and "unknown tool" in ghost.structured_content["error"]
    got = await call("get_order", order_id="O-1001")
    assert got.structured_content["result"]["status"] == "delivered"
    yes = await call("say", text="Shall I refund it?", confirm={"tool": "refund_order"})
    assert yes.structured_content["reply"] == "yes"
    done = await call("refund_order", order_id="O-1001", reason="damaged")
    assert not done.is_error
    bye = await call("say", text="Your order is refunded. Anything else?", done=True)
    assert bye.structured_content["done"] is True
    gone = await call("get_order", order_id="O-1001")
    assert gone.is_error  # the episode has ended
    return start


def _check(traces: Path) -> None:
    [trace] = read_traces(traces)
    w = load_world(SHOP)
    try:
        v = verdict(w, w.task("refund-damaged"), trace)
    finally:
        w.close()
    assert trace.agent == "mcp" and [c.status for c in trace.calls] == ["invalid", "invalid", "ok", "ok"]
    assert [(c.tool, c.kind) for c in trace.calls[:2]] == [("get_order", "read"), ("wipe_orders", "unknown")]
    assert trace.calls[1].arguments == {"order_id": "O-1001"}  # the episode id is the server's, not the call's
    assert v.state_match and v.reward == 1.0 and v.failure_class == "policy_breach"  # the invalid calls are flagged
    assert v.violation_rate == pytest.approx(2 / 4, abs=1e-6)
    assert [f["cls"] for f in v.flags if f["step"] == 1] == ["unknown_tool"]


@pytest.mark.slow
def test_world_over_mcp_stdio(tmp_path):
    traces = tmp_path / "traces.jsonl"
    params = StdioServerParameters(command=sys.executable, args=_args(traces))

    async def main():
        async with Client(params) as client:
            return await _drive(client)

    anyio.run(main)
    _check(traces)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_world_over_mcp_http(tmp_path):
    traces = tmp_path / "traces.jsonl"
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, *_args(traces, "--transport", "http", "--port", str(port))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
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
                return await _drive(client)

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    _check(traces)
    assert json.loads(traces.read_text().splitlines()[0])["kind"] == "world-trace"


TOKEN_A = "world-token-A-0123456789"
TOKEN_B = "world-token-B-0123456789"


def _serve_http(traces: Path, port: int, env: dict[str, str]) -> subprocess.Popen:
    import os

    proc = subprocess.Popen(
        [sys.executable, *_args(traces, "--transport", "http", "--port", str(port))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)


@pytest.mark.slow
def test_a_world_episode_answers_only_the_token_that_started_it(tmp_path):
    """As the pack server (issue 31): with bearer tokens each token is a principal; another
    token naming the episode id gets the reply an unknown id gets, and nothing is recorded in
    the episode; a request without a token is refused (401)."""
    import httpx
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    traces = tmp_path / "traces.jsonl"
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = _serve_http(traces, port, {"GROUNDEVAL_MCP_TOKEN": f"{TOKEN_A},{TOKEN_B}"})

    def client(token):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        return http, Client(streamable_http_client(url, http_client=http))

    async def main():
        http_a, a = client(TOKEN_A)
        http_b, b = client(TOKEN_B)
        async with http_a, http_b, a, b:
            eid = (await a.call_tool("start_episode", {"task_id": "status-only"})).structured_content["episode_id"]
            stolen = await b.call_tool("get_order", {"episode_id": eid, "order_id": "O-1003"})
            unknown = await b.call_tool("get_order", {"episode_id": "0" * 32, "order_id": "O-1003"})
            assert stolen.is_error and stolen.structured_content == unknown.structured_content
            ended = await b.call_tool("end_episode", {"episode_id": eid})
            assert ended.is_error
            own = await a.call_tool("get_order", {"episode_id": eid, "order_id": "O-1003"})
            assert not own.is_error
            await a.call_tool("end_episode", {"episode_id": eid})

    try:
        anyio.run(main)
        refused = httpx.post(url, json={}, headers={"accept": "application/json, text/event-stream"}, timeout=30)
        assert refused.status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    [trace] = read_traces(traces)
    assert [(c.tool, c.status) for c in trace.calls] == [("get_order", "ok")]  # B's calls never reached it


@pytest.mark.parametrize(
    ("extra", "env", "needle"),
    [
        (["--host", "0.0.0.0"], {}, "is not a loopback address"),
        (["--host", "0.0.0.0", "--allow-remote"], {}, "needs a bearer token"),
        (["--host", "0.0.0.0", "--allow-remote"], {"GROUNDEVAL_MCP_TOKEN": "short"}, "shorter than 16"),
    ],
)
def test_serving_a_world_off_loopback_needs_allow_remote_and_a_token(tmp_path, monkeypatch, capsys, extra, env, needle):
    from groundeval.cli.main import main

    monkeypatch.delenv("GROUNDEVAL_MCP_TOKEN", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    traces = tmp_path / "t.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["worlds", "serve", str(SHOP), "--traces", str(traces), "--transport", "http", *extra])
    assert exc.value.code == 2 and needle in capsys.readouterr().err and not traces.exists()
