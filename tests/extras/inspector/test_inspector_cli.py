"""The MCP Inspector CLI against ``groundeval serve`` (issue 32, done-when): every call is a
process of its own, so a session of its own. Over HTTP it completes an episode call by call
(the episode id is the capability, usable from any session of its caller), with and without
a bearer token, in the handshake-era and the sessionless protocol. Over stdio every call
starts its own server: with ``--resume-episodes`` the open episode passes from one to the
next and the Inspector completes it too; without, it ends with the call that started it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import INSPECTOR

from groundeval.trace.io import read_traces

GROUNDEVAL = str(Path(sys.executable).parent / "groundeval")
TOKEN = "inspector-token-0123456789"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The Inspector's and the server's environment: nothing written outside ``tmp_path``."""
    return {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "MCP_CATALOG_PATH": str(tmp_path / "home" / "catalog.json"),
        "MCP_CLIENT_CONFIG_PATH": str(tmp_path / "home" / "client.json"),
        "GROUNDEVAL_CACHE_DIR": str(tmp_path / "cache"),
        "GROUNDEVAL_TRACES_DIR": str(tmp_path / "default-traces"),
        **extra,
    }


TOOL_IS_ERROR = 5  # the Inspector CLI's exit code for a tool result with isError: true (result still printed)


def inspect(env: dict[str, str], *args: str) -> dict:
    """One Inspector CLI call: its JSON result (a tool error's too)."""
    proc = subprocess.run(
        [str(INSPECTOR), "--cli", "--format", "json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, TOOL_IS_ERROR), proc.stderr
    out = json.loads(proc.stdout)["result"]
    assert (proc.returncode == TOOL_IS_ERROR) == bool(out.get("isError"))
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_serve(env: dict[str, str], traces: Path):
    port = _free_port()
    proc = subprocess.Popen(
        [GROUNDEVAL, "serve", "tiny", "--transport", "http", "--port", str(port), "--traces", str(traces)],
        env=env,
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
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _answer_for(schema: dict) -> dict:
    """The smallest answer the question's schema accepts (what a model would fill in)."""
    values = {"boolean": True, "string": "x", "array": [], "integer": 0, "number": 0}
    props = schema.get("properties", {})
    out = {}
    for key in schema.get("required", []):
        p = props.get(key, {})
        out[key] = p["enum"][0] if "enum" in p else values.get(p.get("type"), "x")
    return out


@pytest.mark.slow
@pytest.mark.parametrize(
    "era, token", [("legacy", None), ("modern", None), ("legacy", TOKEN)], ids=["legacy", "modern", "token"]
)
def test_the_inspector_completes_an_episode_call_by_call_over_http(tmp_path, era, token):
    env = _env(tmp_path, GROUNDEVAL_MCP_TOKEN=token or "")
    traces = tmp_path / "traces.jsonl"
    with http_serve(env, traces) as url:
        base = [url, "--transport", "http", "--protocol-era", era]
        if token:
            base += ["--header", f"Authorization: Bearer {token}"]

        def call(tool: str, args: dict) -> dict:
            return inspect(
                env, *base, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(args)
            )

        listed = call("list_questions", {})["structuredContent"]["questions"]
        qid = listed[0]["question_id"]
        started = call("start_episode", {"question_id": qid, "agent": "inspector"})["structuredContent"]
        eid = started["episode_id"]
        hits = call("search_artifacts", {"episode_id": eid, "query": "incident"})
        assert not hits.get("isError") and hits["structuredContent"]["status"] == "ok"
        answer = _answer_for(started["answer_schema"])
        done = call("submit_answer", {"episode_id": eid, "answer": answer})
        assert done["structuredContent"] == {"accepted": True, "status": "ok"}
        late = call("search_artifacts", {"episode_id": eid, "query": "incident"})
        assert late.get("isError") and "unknown or finished" in late["structuredContent"]["error"]
        if token:  # without the token the Inspector is refused before any MCP exchange
            proc = subprocess.run(
                [str(INSPECTOR), "--cli", "--format", "json", "-q", url, "--method", "tools/list"],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert proc.returncode != 0
    (trace,) = read_traces(traces)
    assert trace.status == "completed" and trace.agent == "inspector" and trace.final_answer == answer
    assert [c.tool for c in trace.calls] == ["search_artifacts", "submit_answer"]


@pytest.mark.slow
def test_the_inspector_completes_an_episode_call_by_call_over_stdio(tmp_path):
    """Every call starts its own server; with --resume-episodes each one leaves the open
    episode beside the traces file and the next takes it back by its id."""
    env = _env(tmp_path)
    traces = tmp_path / "traces.jsonl"
    (tmp_path / "host").mkdir()
    cwd = ["--cwd", str(tmp_path / "host")]
    server = [*cwd, GROUNDEVAL, "serve", "tiny", "--traces", str(traces), "--resume-episodes"]

    def call(tool: str, args: dict) -> dict:
        return inspect(
            env, *server, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(args)
        )

    tools = inspect(env, *server, "--method", "tools/list")["tools"]
    assert {t["name"] for t in tools} >= {"start_episode", "search_artifacts", "fetch_artifact", "submit_answer"}
    got = inspect(env, *server, "--method", "prompts/get", "--prompt-name", "answer_question",
                  "--prompt-args", "agent=inspector")  # fmt: skip
    eid = got["_meta"]["groundeval/episode_id"]
    view = inspect(env, *server, "--method", "resources/read", "--uri",
                   f"groundeval://questions/{got['_meta']['groundeval/question_id']}")  # fmt: skip
    schema = json.loads(view["contents"][0]["text"])["answer_schema"]
    assert not traces.exists() or read_traces(traces) == []  # parked, not ended
    hits = call("search_artifacts", {"episode_id": eid, "query": "incident"})
    assert hits["structuredContent"]["status"] == "ok"
    answer = _answer_for(schema)
    assert call("submit_answer", {"episode_id": eid, "answer": answer})["structuredContent"]["accepted"] is True
    late = call("search_artifacts", {"episode_id": eid, "query": "incident"})
    assert late.get("isError") and "unknown or finished" in late["structuredContent"]["error"]
    (trace,) = read_traces(traces)
    assert trace.status == "completed" and trace.agent == "inspector" and trace.final_answer == answer
    assert [c.tool for c in trace.calls] == ["search_artifacts", "submit_answer"]
    assert list((tmp_path / "host").iterdir()) == [] and list(Path(f"{traces}.open").iterdir()) == []


@pytest.mark.slow
def test_without_resume_an_inspector_stdio_episode_ends_with_its_call(tmp_path):
    env = _env(tmp_path)
    traces = tmp_path / "traces.jsonl"
    server = ["--cwd", str(tmp_path), GROUNDEVAL, "serve", "tiny", "--traces", str(traces)]
    got = inspect(env, *server, "--method", "prompts/get", "--prompt-name", "answer_question",
                  "--prompt-args", "agent=inspector")  # fmt: skip
    eid = got["_meta"]["groundeval/episode_id"]
    (trace,) = read_traces(traces)  # the server wrote it when the Inspector closed stdin
    assert trace.agent == "inspector" and trace.status == "no_answer"
    late = inspect(env, *server, "--method", "tools/call", "--tool-name", "search_artifacts",
                   "--tool-args-json", json.dumps({"episode_id": eid, "query": "x"}))  # fmt: skip
    assert late.get("isError") and "unknown or finished" in late["structuredContent"]["error"]
