"""Worlds on the Ray backend give the local backend's bytes: ``traces.jsonl`` (task order, every
field: a world trace has no wall-clock field), ``verdicts.jsonl`` and the reports, through the
Python API, ``groundeval run``/``eval WORLD`` and ``groundeval worlds run``; an agent's exception
is recorded as locally, a worker that dies costs its episode only, an agent that cannot be
pickled is refused before anything runs. Trajectory verification: ``test_ray_trajectories.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ray_agents import WorldCrashOn, WorldUnpicklable
from test_ray_identity import cli

from groundeval.errors import ContractError, UsageError
from groundeval.worlds import load_world
from groundeval.worlds.agents import make_agent
from groundeval.worlds.run import read_traces, run_world

SHOP = Path(__file__).resolve().parents[2] / "worlds" / "shop"
OUTPUTS = ("traces.jsonl", "verdicts.jsonl", "report.json", "report.md", "report.html")
BASELINES = ("gold", "skip-confirm", "wrong-arg", "forbidden", "early-stop", "padding")


def outputs(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in OUTPUTS}


def test_every_baseline_gives_the_local_bytes(ray_backend, tmp_path):
    """Each baseline on the test world, two trials, two episodes at once per worker."""
    classes = set()
    for agent in BASELINES:
        local = run_world(SHOP, agent, tmp_path / f"local-{agent}", trials=2, concurrency=2)
        remote = run_world(SHOP, agent, tmp_path / f"ray-{agent}", trials=2, concurrency=2, backend=ray_backend)
        assert outputs(remote.out_dir) == outputs(local.out_dir), agent
        assert [(t.task_id, t.trial) for t in remote.traces] == [(t.task_id, t.trial) for t in local.traces]
        info = json.loads((remote.out_dir / "run.json").read_text())
        assert (info["backend"], info["workers"], info["concurrency"]) == ("ray", 2, 2)
        assert info["status"] == "completed" and info["episodes_run"] == 10
        assert "backend" not in json.loads((local.out_dir / "run.json").read_text())
        classes |= {v.failure_class for v in remote.verdicts}
    assert {"completed", "policy_breach", "wrong_end_state", "incomplete"} <= classes  # they differ: a real check


def test_cli_run_eval_and_worlds_run_on_a_bundled_world(ray_backend, tmp_path, capsys):
    """support_desk through the three commands (joining the session's Ray instance), as locally."""
    common = ("--agent", "gold", "--trials", "2")
    code, local_out, err = cli(capsys, "run", "support_desk", *common, "--out", tmp_path / "local")
    assert code == 0, err
    for command in (("run",), ("eval",), ("worlds", "run")):
        out = tmp_path / "-".join(command)
        code, text, err = cli(
            capsys, *command, "support_desk", *common, "--out", out, "--backend", "ray", "--workers", "2"
        )
        assert code == 0, (command, err)
        assert outputs(out) == outputs(tmp_path / "local"), command
        assert text.splitlines()[:3] == local_out.splitlines()[:3]  # the same headline figures
    assert json.loads((tmp_path / "local" / "run.json").read_text())["episodes_total"] == 104  # 52 tasks x 2


def test_ray_options_without_backend_ray_and_pack_options_are_refused(ray_backend, tmp_path, capsys):
    for extra, named in (
        (["--workers", "2"], "--workers: needs --backend ray"),
        (["--db", "w.duckdb"], "--db"),
        (["--backend", "ray", "--workers", "64"], "--workers: 64 workers, but the Ray cluster has 2 CPUs"),
    ):
        code, _o, err = cli(capsys, "run", str(SHOP), "--agent", "gold", "--out", tmp_path / "o", *extra)
        assert code == 2 and named in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_agent_exceptions_are_recorded_as_locally(ray_backend, tmp_path):
    local = run_world(SHOP, "ray_agents:world_boom", tmp_path / "local", trials=2)
    remote = run_world(SHOP, "ray_agents:world_boom", tmp_path / "ray", trials=2, backend=ray_backend)
    assert outputs(remote.out_dir) == outputs(local.out_dir)
    errored = [t for t in remote.traces if t.ended_by == "error"]
    assert errored and len(errored) < len(remote.traces)
    assert all(t.error.startswith("ValueError: boom on ") for t in errored)
    assert {v.failure_class for v in remote.verdicts if v.task_id in {t.task_id for t in errored}} == {"agent_error"}


def test_a_worker_dying_costs_one_episode(ray_backend, tmp_path):
    gold = run_world(SHOP, "gold", tmp_path / "gold")
    doomed = "status-only"
    remote = run_world(SHOP, WorldCrashOn([doomed]), tmp_path / "ray", backend=ray_backend)
    assert [t.task_id for t in remote.traces] == [t.task_id for t in gold.traces]
    by_task = {t.task_id: t for t in remote.traces}
    dead = by_task[doomed]
    assert dead.ended_by == "error" and dead.error.startswith("WorkerFailure: the Ray worker died")
    assert dead.calls == [] and dead.agent == "world-crash-on"
    verdicts = {v.task_id: v for v in remote.verdicts}
    assert verdicts[doomed].failure_class == "agent_error" and verdicts[doomed].reward == 0
    for t in gold.traces:  # every other episode is the gold one, under the agent's name
        if t.task_id != doomed:
            assert by_task[t.task_id] == t.model_copy(update={"agent": "world-crash-on"})
    assert json.loads((tmp_path / "ray" / "run.json").read_text())["status"] == "completed"


def test_unpicklable_agent_is_refused_before_running(ray_backend, tmp_path):
    with pytest.raises(UsageError, match="agent 'world-unpicklable' cannot be sent to Ray workers .*lock"):
        run_world(SHOP, WorldUnpicklable(), tmp_path / "ray", backend=ray_backend)
    assert not (tmp_path / "ray").exists()


def test_a_worker_loading_another_world_refuses_to_start(ray_backend, tmp_path):
    """The driver's world (its policy changed in memory) is not what the workers load from its
    folder: the run stops before any episode, with a located error, instead of mixing worlds."""
    w = load_world(SHOP)
    try:
        w.policy += "\nA sentence the folder does not have."
        with pytest.raises(ContractError, match="the world on worker .* differs from the run's"):
            run_world(w, "gold", tmp_path / "ray", backend=ray_backend)
    finally:
        w.close()
    assert not (tmp_path / "ray" / "traces.jsonl").read_text()


def test_resume_across_backends(ray_backend, tmp_path):
    """A run started locally and resumed on Ray (and the reverse) ends as the all-local run."""
    full = run_world(SHOP, "padding", tmp_path / "full", trials=2)
    for first, then in (("local", ray_backend), (ray_backend, "local")):
        out = tmp_path / f"mixed-{first if isinstance(first, str) else 'ray'}"
        run_world(SHOP, "padding", out, trials=2, backend=first)
        kept = (out / "traces.jsonl").read_text().splitlines(keepends=True)[:3]
        (out / "traces.jsonl").write_text("".join(kept))
        again = run_world(SHOP, "padding", out, trials=2, resume=True, backend=then)
        assert json.loads((out / "run.json").read_text())["episodes_run"] == 7
        assert outputs(again.out_dir) == outputs(full.out_dir)
    assert read_traces(tmp_path / "full" / "traces.jsonl")[0].agent == make_agent("padding").name


def _reply(body: dict) -> dict:
    """A deterministic model on both sides of the refund task of the test world: the agent (a
    request with tools) asks for the order, looks it up, asks for a yes, refunds; the user
    gives the order id, says yes, then stops."""
    last = body["messages"][-1]
    text = str(last.get("content") or "")
    if "tools" not in body:  # the user
        said = text.lower()
        if "order number" in said:
            return {"content": "order_id: O-1001"}
        if "confirm" in said:
            return {"content": "yes"}
        return {"content": "###STOP###" if "anything else" in said else "My blender is broken, please refund it."}
    if last["role"] == "tool":
        if '"status": "delivered"' in text or '"status":"delivered"' in text:
            return {"content": "I can refund order O-1001 as damaged. Please confirm: shall I refund order?"}
        return {"content": "Your order is refunded. Is there anything else?"}
    if text.startswith("order_id: "):
        args = {"order_id": text.split(": ", 1)[1]}
        return {
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": json.dumps(args)}}
            ]
        }
    if text == "yes":
        args = {"order_id": "O-1001", "reason": "damaged"}
        return {
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "refund_order", "arguments": json.dumps(args)}}
            ]
        }
    return {"content": "Sorry to hear that. What is your order number?"}


@pytest.fixture
def model_server():
    """A real OpenAI-compatible HTTP server on this machine (the Ray workers reach it too)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen = {"requests": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server API
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            seen["requests"] += 1
            message = {"role": "assistant", "content": None, **_reply(body)}
            data = json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    host, port = httpd.server_address[:2]
    yield f"http://{host}:{port}/v1", seen
    httpd.shutdown()
    httpd.server_close()


def test_llm_agent_and_llm_user_on_workers(ray_backend, model_server, tmp_path, capsys):
    """``worlds run --agent openai:<model> --simulator llm:<model> --backend ray``: each worker
    builds the model agent by name, the model user is pickled to it; the same bytes as locally."""
    pytest.importorskip("httpx")
    url, seen = model_server
    args = ["worlds", "run", SHOP, "--agent", "openai:agent-model", "--base-url", url]
    args += ["--simulator", "llm:user-model", "--trials", "2"]
    code, _o, err = cli(capsys, *args, "--out", tmp_path / "local")
    assert code == 0, err
    asked = seen["requests"]
    code, _o, err = cli(capsys, *args, "--out", tmp_path / "ray", "--backend", "ray", "--workers", "2")
    assert code == 0, err
    assert seen["requests"] == 2 * asked  # the workers asked the model as often as the local run did
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "local")
    verdicts = {json.loads(x)["task_id"]: json.loads(x) for x in (tmp_path / "ray" / "verdicts.jsonl").open()}
    assert verdicts["refund-damaged"]["reward"] == 1.0
