"""What the ``verifiers`` tests share: a real local OpenAI-compatible HTTP server playing a
scripted policy, one full ``verifiers`` rollout of the groundeval environment against it, and
the Python API route (groundeval's own :class:`Episode` driven with the same calls).

Import it only after ``pytest.importorskip("verifiers.v1")``: :func:`rollout` needs verifiers."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from groundeval.runtime.episode import Episode


class ScriptedModel:
    """An OpenAI-compatible chat completions server replying from a script of tool calls: one
    call per turn, then a plain message (the policy stops). A call's arguments are sent as the
    JSON text of the object, or as the string itself when the script gives a string (text that
    need not be JSON)."""

    def __init__(self, calls: list[tuple[str, Any]]):
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
            text = args if isinstance(args, str) else json.dumps(args)
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"call_{turn}", "type": "function", "function": {"name": name, "arguments": text}}
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


def environment(pack: str = "tiny") -> Any:
    import verifiers.v1 as vf

    from groundeval.rl.verifiers_env import PLUGIN_ID

    cfg = vf.SingleAgentEnvConfig.model_validate(
        {
            "taskset": {"id": PLUGIN_ID, "pack": pack},
            "agent": {"harness": {"id": PLUGIN_ID}, "runtime": {"type": "subprocess"}},
        }
    )
    return vf.load_environment(cfg)


def tasks(pack: str = "tiny") -> dict[str, Any]:
    """The environment's tasks by question id."""
    return {t.data.question_id: t for t in environment(pack).taskset}


def rollout(task: Any, calls: list[tuple[str, Any]], monkeypatch: Any) -> tuple[Any, ScriptedModel]:
    """One full rollout of ``task`` with the scripted policy playing ``calls``."""
    import verifiers.v1 as vf

    model = ScriptedModel(calls)
    monkeypatch.setenv("SCRIPTED_KEY", "test-key")
    env = environment()
    ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=model.url, api_key_var="SCRIPTED_KEY"))

    async def go():
        async with env.serving():
            return await env.run_episode(task, ctx)

    try:
        episode = asyncio.run(go())
    finally:
        model.close()
    return episode, model


def scripts(store: Any, qs: Any) -> list[tuple[Any, str, list[tuple[str, Any]], Any]]:
    """``(question, agent name, its calls, its trace)``: the oracle on the first question, and the
    leaky baseline on the first question where its refused fetches cost it (a score strictly
    between 0 and 1, a call flagged)."""
    from groundeval.agents.baselines import LeakyAgent
    from groundeval.agents.oracle import OracleAgent
    from groundeval.agents.runner import run_episode
    from groundeval.scoring.score import score

    out = [(qs.questions[0], "oracle", run_episode(store, qs.questions[0], OracleAgent()))]
    for q in qs.questions:
        trace = run_episode(store, q, LeakyAgent())
        if 0.0 < score(q, trace, store.manifest.evaluation.scoring).s_adj < 1.0 and any(c.flags for c in trace.calls):
            out.append((q, "leaky", trace))
            break
    assert len(out) == 2
    return [(q, name, [(c.tool, c.arguments) for c in t.calls], t) for q, name, t in out]


def direct(store: Any, question: Any, calls: list[tuple[str, Any]], max_steps: int = 30) -> Any:
    """The Python API route: the same calls made on groundeval's own episode (a string's
    arguments passed on as the text they are), its recorded trace."""
    with Episode(store, question, "tool", agent="verifiers", max_steps=max_steps) as ep:
        for name, arguments in calls:
            ep.call(name, arguments)
    return ep.trace


def as_value(raw: Any) -> Any:
    """What a Python API caller passes for a model's arguments text: the JSON value it is, the
    text itself when it is no JSON, no arguments when it is blank (anything but a text as it is)."""
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def recorded(trace: Any) -> list[tuple[Any, ...]]:
    """A trace's call records as the other routes' tests compare them."""
    return [(c.tool, c.arguments, c.status, c.result_ids, c.flags, c.error) for c in trace.calls]


def comparable(trace: Any) -> dict[str, Any]:
    """The whole trace but its wall-clock timings."""
    data = trace.model_dump(mode="json")
    data.pop("timings")
    return data
