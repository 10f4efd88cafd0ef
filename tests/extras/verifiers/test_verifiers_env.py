"""A full ``verifiers`` rollout of the groundeval environment: a real local OpenAI-compatible
HTTP server plays a scripted policy (the oracle's calls, then a wrong-path script), the
rollout goes through verifiers' interception endpoint, its MCP tool server (the gated
runtime, a subprocess) and its scoring; the rewards equal ``groundeval score`` on the
trace the tool server recorded."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

vf = pytest.importorskip(
    "verifiers.v1",
    reason="verifiers is not installed: bash .ci/extras/verifiers.sh (a venv "
    "of its own: verifiers 0.4 pins mcp==2.0.0, groundeval's mcp/dev extras need mcp>=2.3)",
)

import groundeval  # noqa: E402 - after the skip
from groundeval.agents.oracle import OracleAgent  # noqa: E402
from groundeval.agents.runner import run_episode  # noqa: E402
from groundeval.rl.verifiers_env import PLUGIN_ID  # noqa: E402
from groundeval.trace.model import Trace  # noqa: E402


class ScriptedModel:
    """An OpenAI-compatible chat completions server replying from a script of tool calls:
    one call per turn, then a plain message (the policy stops)."""

    def __init__(self, calls: list[tuple[str, dict]]):
        self.calls = list(calls)
        self.requests: list[dict] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                model.requests.append(body)
                data = json.dumps(model.reply(len(model.requests) - 1)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reply(self, turn: int) -> dict:
        if turn < len(self.calls):
            name, args = self.calls[turn]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{turn}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": "done"}, "stop"
        return {
            "id": f"cmpl-{turn}",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def rollout(task, calls, monkeypatch):
    model = ScriptedModel(calls)
    monkeypatch.setenv("SCRIPTED_KEY", "test-key")
    cfg = vf.SingleAgentEnvConfig.model_validate(
        {
            "taskset": {"id": PLUGIN_ID, "pack": "tiny"},
            "agent": {"harness": {"id": PLUGIN_ID}, "runtime": {"type": "subprocess"}},
        }
    )
    env = vf.load_environment(cfg)
    ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=model.url, api_key_var="SCRIPTED_KEY"))

    async def go():
        async with env.serving():
            return await env.run_episode(task, ctx)

    try:
        episode = asyncio.run(go())
    finally:
        model.close()
    return episode, model


@pytest.fixture(scope="module")
def tiny_questions():
    store = groundeval.load("tiny")
    qs = groundeval.generate(store)
    yield store, qs
    store.close()


def _scripts(store, qs):
    """(question, agent name, its calls): the oracle, and the leaky baseline on a question where
    its refused fetches cost it (a score strictly between 0 and 1)."""
    from groundeval.agents.baselines import LeakyAgent
    from groundeval.scoring.score import score

    out = [(qs.questions[0], "oracle", run_episode(store, qs.questions[0], OracleAgent()))]
    for q in qs.questions:
        trace = run_episode(store, q, LeakyAgent())
        if 0.0 < score(q, trace, store.manifest.evaluation.scoring).s_adj < 1.0 and any(c.flags for c in trace.calls):
            out.append((q, "leaky", trace))
            break
    assert len(out) == 2
    return [(q, name, [(c.tool, c.arguments) for c in t.calls], t) for q, name, t in out]


def test_a_full_rollout_earns_the_scorers_numbers(tiny_questions, monkeypatch, tmp_path):
    from groundeval.questions.io import write_questions

    store, qs = tiny_questions
    cfg = vf.SingleAgentEnvConfig.model_validate({"taskset": {"id": PLUGIN_ID, "pack": "tiny"}})
    tasks = {t.data.question_id: t for t in vf.load_environment(cfg).taskset}
    assert list(tasks) == [q.id for q in qs.questions]
    write_questions(qs, tmp_path / "questions.json")
    for q, name, calls, reference in _scripts(store, qs):
        episode, model = rollout(tasks[q.id], calls, monkeypatch)
        assert not episode.errors, episode.errors
        offered = sorted(t["function"]["name"] for t in model.requests[0]["tools"])
        assert offered == ["fetch_artifact", "search_artifacts", "submit_answer"]
        assert q.text in model.requests[0]["messages"][-1]["content"]
        (trace,) = episode.traces
        recorded = Trace.model_validate(trace.state.ge_trace)
        assert [(c.tool, c.arguments, c.status, c.flags) for c in recorded.calls] == [
            (c.tool, c.arguments, c.status, c.flags) for c in reference.calls
        ], name
        # the rewards are the numbers `groundeval score` writes for this very trace
        traces = tmp_path / f"{name}.jsonl"
        traces.write_text(recorded.model_dump_json() + "\n")
        out = tmp_path / name
        subprocess.run(
            [
                sys.executable,
                "-m",
                "groundeval.cli.main",
                "score",
                str(traces),
                "-q",
                str(tmp_path / "questions.json"),
                "--pack",
                "tiny",
                "--out",
                str(out),
            ],
            check=True,
            capture_output=True,
        )
        scored = json.loads((out / "scores.jsonl").read_text().splitlines()[0])
        assert trace.rewards["s_adj"].score == scored["s_adj"], name
        if name == "leaky":
            assert 0.0 < scored["s_adj"] < 1.0 and scored["violation_rate"] > 0
        for key in ("s_answer", "s_traj", "s_combined", "penalty", "violation_rate"):
            assert trace.metrics[key] == scored[key], (name, key)
        for k, v in scored["answer_components"].items():
            assert trace.metrics[f"answer.{k}"] == v, (name, k)
        for k, v in scored["traj_components"].items():
            assert trace.metrics[f"traj.{k}"] == v, (name, k)
