"""Starting and stopping ``groundeval serve`` as hosts and process managers do (issue 32
items 3 and 5): SIGTERM and SIGINT both write the open episodes' traces, traces are recorded
by default in a documented place and ``score --pack`` finds the questions they answer, a host
without the mcp extra is told why; and the traces file several servers share stays scorable."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from runtime_mcp_helpers import http_server, serve_cmd, write_questions
from runtime_questions import at, make_question

from groundeval.runtime.mcp_server import EpisodeHub, HubError
from groundeval.runtime.question_cache import default_traces_path
from groundeval.runtime.trace_file import TraceFile
from groundeval.trace.io import read_traces
from groundeval.trace.model import Trace

QUESTIONS = [
    make_question(actor="alice", as_of=at(5), qid="q-alice"),
    make_question(actor="carol", as_of=at(9), qid="q-carol"),
]
ANSWER = {"could_actor_have_known": True}


@pytest.fixture()
def questions_file(tmp_path, tiny_store):
    return write_questions(tmp_path / "questions.json", QUESTIONS, tiny_store.digest)


# ----------------------------------------------------------------------------- item 3: signals


def _rpc(proc, message: dict, timeout: float = 60) -> dict | None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    if "id" not in message:
        return None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no reply"
    return json.loads(proc.stdout.readline())


def _open_two_episodes_over_stdio(proc) -> None:
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    for n, qid in enumerate(("q-alice", "q-carol")):
        call = {"name": "start_episode", "arguments": {"question_id": qid}}
        r = _rpc(proc, {"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call", "params": call})
        eid = r["result"]["structuredContent"]["episode_id"]
        call = {"name": "search_artifacts", "arguments": {"episode_id": eid, "query": "checkout"}}
        _rpc(proc, {"jsonrpc": "2.0", "id": 20 + n, "method": "tools/call", "params": call})


async def _open_two_episodes_over_http(url: str) -> None:
    async with Client(url) as client:
        for qid in ("q-alice", "q-carol"):
            eid = (await client.call_tool("start_episode", {"question_id": qid})).structured_content["episode_id"]
            await client.call_tool("search_artifacts", {"episode_id": eid, "query": "checkout"})


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_serve_after_writing_the_open_episodes(tiny_pack, questions_file, tmp_path, transport, signum):
    traces = tmp_path / "traces.jsonl"
    if transport == "stdio":
        proc = subprocess.Popen(
            serve_cmd(tiny_pack, questions_file, "--traces", str(traces)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            _open_two_episodes_over_stdio(proc)
            proc.send_signal(signum)
            code = proc.wait(timeout=30)  # the stdin pipe stays open: the signal alone stops it
            err = proc.stderr.read().decode()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    else:
        with http_server(tiny_pack, questions_file, "--traces", str(traces)) as (url, proc):
            anyio.run(_open_two_episodes_over_http, url)
            proc.send_signal(signum)
            code = proc.wait(timeout=30)
            err = proc.stderr.read().decode()
    assert code == 128 + signum, err
    assert "Traceback" not in err and f"stopped by signal {int(signum)}" in err
    written = read_traces(traces)
    assert sorted(t.question_id for t in written) == ["q-alice", "q-carol"]
    assert all(t.status == "no_answer" and [c.tool for c in t.calls] == ["search_artifacts"] for t in written)


# ----------------------------------------------------------------------------- item 5: hosts


def _host_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "GROUNDEVAL_CACHE_DIR": str(tmp_path / "cache"),
        "GROUNDEVAL_TRACES_DIR": str(tmp_path / "traces"),
    }


@pytest.mark.slow
def test_serve_records_by_default_and_score_finds_the_questions_by_pack_name(tiny_pack, tiny_store, tmp_path):
    """The host snippet as documented (``serve tiny``, no --traces): the episode is recorded
    in the default traces file, and ``score FILE --pack tiny`` scores it without --questions."""
    env = _host_env(tmp_path)
    params = StdioServerParameters(command="groundeval", args=["serve", "tiny"], env=env, cwd=str(tmp_path))

    async def main() -> tuple[str, dict]:
        async with Client(params) as client:
            got = await client.get_prompt("answer_question", {"agent": "host"})
            eid, qid = got.meta["groundeval/episode_id"], got.meta["groundeval/question_id"]
            await client.call_tool("search_artifacts", {"episode_id": eid, "query": "incident"})
            await client.call_tool("end_episode", {"episode_id": eid})
            return qid, eid

    qid, _ = anyio.run(main)
    old = {k: os.environ.get(k) for k in ("GROUNDEVAL_TRACES_DIR", "GROUNDEVAL_CACHE_DIR")}
    os.environ.update({k: env[k] for k in old})
    try:
        path = default_traces_path(tiny_store)  # the pack's own seed, as the snippet serves
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert path.parent == tmp_path / "traces" and path.name.startswith(f"tiny-{tiny_store.digest[:16]}-seed")
    (trace,) = read_traces(path)
    assert trace.question_id == qid and trace.agent == "host" and [c.tool for c in trace.calls] == ["search_artifacts"]

    out = tmp_path / "scored"
    proc = subprocess.run(
        ["groundeval", "score", str(path), "--pack", "tiny", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (cached,) = (tmp_path / "cache" / "questions").glob("*.json")
    assert f"questions: {cached}" in proc.stderr
    (line,) = (out / "scores.jsonl").read_text().splitlines()
    assert json.loads(line)["question_id"] == qid
    # no cached generation holds these questions: a usage error naming where it looked
    proc = subprocess.run(
        ["groundeval", "score", str(path), "--pack", "tiny", "--questions-cache", str(tmp_path / "empty")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "no cached questions of pack" in proc.stderr and "Traceback" not in proc.stderr
    assert str(tmp_path / "empty" / "questions") in proc.stderr


@pytest.mark.slow
def test_a_host_without_the_mcp_extra_is_told_why(tmp_path):
    """The SDK hidden in the server process (as on an install without the extra): the host's
    initialize gets a JSON-RPC error naming the install command, not a closed connection."""
    hide = "import sys; sys.modules['mcp'] = None; from groundeval.cli.main import main; main()"
    params = StdioServerParameters(command=sys.executable, args=["-c", hide, "serve", "tiny"], cwd=str(tmp_path))

    async def main():
        async with Client(params):
            pass

    with pytest.raises(BaseException) as err:  # the SDK client raises the error inside its task group
        anyio.run(main)
    found = [err.value]
    while found and not isinstance(found[0], MCPError):
        e = found.pop(0)
        found += list(getattr(e, "exceptions", ())) + [x for x in (e.__cause__, e.__context__) if x is not None]
    assert found, err.value
    assert "needs the 'mcp' extra" in found[0].message and "pip install 'groundeval[mcp]'" in found[0].message


# ----------------------------------------------------------------------------- one file, many servers


def _trace(qid: str, agent: str) -> Trace:
    return Trace(
        question_id=qid,
        track="perspective",
        mode="tool",
        actor="alice",
        as_of=at(5),
        contract_digest="0" * 64,
        agent=agent,
    )


def test_servers_sharing_a_traces_file_never_repeat_a_trial(tmp_path):
    path = tmp_path / "traces.jsonl"
    first, second = TraceFile(path), TraceFile(path)  # two servers on one file
    order = [(first, "q1"), (second, "q1"), (second, "q2"), (first, "q1"), (first, "q2"), (second, "q1")]
    for n, (writer, qid) in enumerate(order):
        writer.append(_trace(qid, f"w{n}"))
    with open(path, "ab") as fh:  # a writer killed mid-line
        fh.write(b'{"question_id": "q1", "tri')
    third = TraceFile(path)  # a restart reads what is there
    third.append(_trace("q1", "after-torn-line"))
    lines = path.read_bytes().splitlines()
    assert lines[6] == b'{"question_id": "q1", "tri'  # left for scoring to report, located
    written = [json.loads(x) for i, x in enumerate(lines) if i != 6]
    assert [(t["question_id"], t.get("trial", 0), t["agent"]) for t in written] == [
        ("q1", 0, "w0"),
        ("q1", 1, "w1"),
        ("q2", 0, "w2"),
        ("q1", 2, "w3"),
        ("q2", 1, "w4"),
        ("q1", 3, "w5"),
        ("q1", 4, "after-torn-line"),
    ]
    path.write_bytes(b"")  # emptied while serving: numbering starts again from the file
    first.append(_trace("q2", "fresh"))
    assert json.loads(path.read_bytes()).get("trial", 0) == 0


@pytest.mark.slow
def test_servers_in_many_processes_share_one_traces_file(tmp_path):
    """Four processes appending 25 traces of one question each, at once: 100 distinct trials."""
    path = tmp_path / "traces.jsonl"
    TraceFile(path)
    code = (
        "import sys\n"
        "from groundeval.runtime.trace_file import TraceFile\n"
        "from groundeval.trace.model import Trace\n"
        "f = TraceFile(sys.argv[1])\n"
        "for i in range(25):\n"
        "    f.append(Trace(question_id='q', track='perspective', mode='tool', actor=None,\n"
        "             as_of='2026-03-05T00:00:00Z', contract_digest='0' * 64, agent=sys.argv[2]))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"p{i}"]) for i in range(4)]
    deadline = time.monotonic() + 120
    for p in procs:
        assert p.wait(timeout=max(1, deadline - time.monotonic())) == 0
    trials = sorted(json.loads(x).get("trial", 0) for x in path.read_bytes().splitlines())
    assert trials == list(range(100))


# ----------------------------------------------------------------------------- --resume-episodes


def test_a_parked_episode_goes_on_in_the_next_server(tiny_store, tmp_path):
    traces, park = tmp_path / "traces.jsonl", tmp_path / "traces.jsonl.open"
    first = EpisodeHub(tiny_store, QUESTIONS, traces=traces, park=park)
    eid = first.call("start_episode", {"question_id": "q-alice", "agent": "a"})["episode_id"]
    first.call("search_artifacts", {"episode_id": eid, "query": "checkout"})
    first.close()
    assert not traces.read_bytes() and [p.name for p in park.iterdir()] == [f"{eid}.json"]
    parked_at = json.loads((park / f"{eid}.json").read_text())["parked_at"]
    # another question set's server leaves it alone; two servers asking at once: one gets it
    other = EpisodeHub(tiny_store, [make_question(qid="q-other")], traces=tmp_path / "other.jsonl", park=park)
    with pytest.raises(HubError, match="unknown or finished"):
        other.call("search_artifacts", {"episode_id": eid, "query": "x"})
    assert [p.name for p in park.iterdir()] == [f"{eid}.json"]
    second = EpisodeHub(tiny_store, QUESTIONS, traces=traces, park=park)
    third = EpisodeHub(tiny_store, QUESTIONS, traces=traces, park=park)
    with pytest.raises(HubError, match="unknown or finished"):  # a token's caller never takes one back
        third.call("fetch_artifact", {"episode_id": eid, "artifact_id": "JIRA-42"}, owner="token-0")
    assert json.loads((park / f"{eid}.json").read_text())["parked_at"] == parked_at  # given back as it was
    second.call("fetch_artifact", {"episode_id": eid, "artifact_id": "JIRA-42"})
    with pytest.raises(HubError, match="unknown or finished"):  # held by the second now
        third.call("fetch_artifact", {"episode_id": eid, "artifact_id": "JIRA-42"})
    second.call("submit_answer", {"episode_id": eid, "answer": ANSWER})
    (trace,) = read_traces(traces)
    assert trace.status == "completed" and trace.agent == "a"
    assert [c.tool for c in trace.calls] == ["search_artifacts", "fetch_artifact", "submit_answer"]
    assert [c.index for c in trace.calls] == [0, 1, 2] and list(park.iterdir()) == []


def test_an_episode_parked_past_the_idle_timeout_is_written_as_abandoned(tiny_store, tmp_path):
    traces, park = tmp_path / "traces.jsonl", tmp_path / "park"
    first = EpisodeHub(tiny_store, QUESTIONS, traces=traces, park=park)
    eid = first.call("start_episode", {"question_id": "q-carol"})["episode_id"]
    first.call("search_artifacts", {"episode_id": eid, "query": "staffing"})
    first.close()
    record = json.loads((park / f"{eid}.json").read_text())
    record["parked_at"] -= 3600
    (park / f"{eid}.json").write_text(json.dumps(record))
    EpisodeHub(tiny_store, QUESTIONS, traces=traces, park=park, idle_timeout=60)  # starting sweeps it
    (trace,) = read_traces(traces)
    assert trace.status == "abandoned" and [c.tool for c in trace.calls] == ["search_artifacts"]
    assert list(park.iterdir()) == []


@pytest.mark.slow
def test_a_client_starting_a_stdio_server_per_call_finishes_with_resume_episodes(tiny_pack, questions_file, tmp_path):
    traces = tmp_path / "traces.jsonl"
    args = ["-m", "groundeval.cli.main", "serve", str(tiny_pack), "--questions", str(questions_file)]
    params = StdioServerParameters(
        command=sys.executable, args=[*args, "--traces", str(traces), "--resume-episodes"], env=dict(os.environ)
    )

    async def call(tool: str, arguments: dict) -> dict:
        async with Client(params) as client:  # a new server process each time
            return (await client.call_tool(tool, arguments)).structured_content

    async def main() -> list[dict]:
        eid = (await call("start_episode", {"question_id": "q-alice", "agent": "per-process"}))["episode_id"]
        return [
            await call("search_artifacts", {"episode_id": eid, "query": "checkout"}),
            await call("submit_answer", {"episode_id": eid, "answer": ANSWER}),
        ]

    replies = anyio.run(main)
    assert replies[0]["status"] == "ok" and replies[1] == {"accepted": True, "status": "ok"}
    (trace,) = read_traces(traces)
    assert trace.status == "completed" and [c.tool for c in trace.calls] == ["search_artifacts", "submit_answer"]
    code = subprocess.run(
        [sys.executable, *args, "--resume-episodes", "--transport", "http"], capture_output=True, text=True, timeout=60
    )
    assert code.returncode == 2 and "--resume-episodes" in code.stderr and "Traceback" not in code.stderr


def test_the_park_folder_is_private(tmp_path):
    from groundeval.runtime.parked import ParkedEpisodes

    ParkedEpisodes(tmp_path / "t.jsonl.open")
    assert (tmp_path / "t.jsonl.open").stat().st_mode & 0o077 == 0


def test_score_without_questions_needs_the_pack(tmp_path, capsys):
    from groundeval.cli.main import main as cli

    traces = tmp_path / "t.jsonl"
    traces.write_text("")
    with pytest.raises(SystemExit) as exc:
        cli(["score", str(traces)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--questions" in err and "--pack PACK" in err and "Traceback" not in err
