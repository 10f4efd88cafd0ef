"""The LLM user simulator and the LLM agent against a real local OpenAI-compatible server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from groundeval.worlds import STOP, load_world  # noqa: E402
from groundeval.worlds.agents import make_agent  # noqa: E402
from groundeval.worlds.episode import run_episode  # noqa: E402
from groundeval.worlds.llm import LLMUser, LLMWorldAgent  # noqa: E402
from groundeval.worlds.verdict import verdict  # noqa: E402

SHOP = Path(__file__).resolve().parent / "shop"


def _user_model(messages, lie):
    said = messages[-1]["content"].lower()
    if "order number" in said or "order id" in said:
        return "order_id: O-9999" if lie else "order_id: O-1001"
    if "confirm" in said:
        return "yes"
    if "anything else" in said:
        return STOP
    return "My blender is broken, please refund it."


def _agent_model(messages):
    last = messages[-1]
    if last["role"] == "tool":
        out = json.loads(last["content"])
        if out["ok"] and isinstance(out["result"], dict) and out["result"].get("status") == "delivered":
            return {"content": "I can refund order O-1001 as damaged. Please confirm: shall I refund order?"}
        return {"content": "Your order is refunded. Is there anything else?"}
    text = last["content"]
    if text.startswith("order_id: "):
        oid = text.split(": ", 1)[1]
        return {
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": json.dumps({"order_id": oid})},
                }
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
    state = {"lie": False, "requests": 0, "payloads": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server API
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            state["requests"] += 1
            state["payloads"].append(body)
            assert self.path.endswith("/chat/completions")
            if "tools" in body:
                message = {"role": "assistant", "content": None, **_agent_model(body["messages"])}
            else:
                message = {"role": "assistant", "content": _user_model(body["messages"], state["lie"])}
            data = json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    yield f"http://{host}:{port}/v1", state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def shop():
    w = load_world(SHOP)
    yield w
    w.close()


def test_llm_user_with_gold_agent(shop, model_server):
    url, state = model_server
    task = shop.task("refund-damaged")
    tr = run_episode(shop, task, make_agent("gold"), simulator=LLMUser("user-model", url))
    v = verdict(shop, task, tr)
    assert tr.simulator == "llm:user-model" and tr.user_errors == []
    assert v.reward == 1.0 and v.failure_class == "completed"
    assert state["requests"] >= 3


def test_llm_user_that_invents_a_fact_is_a_user_error(shop, model_server):
    url, state = model_server
    state["lie"] = True
    task = shop.task("refund-damaged")
    tr = run_episode(shop, task, make_agent("gold"), simulator=LLMUser("user-model", url))
    assert any("O-9999" in e for e in tr.user_errors)
    assert verdict(shop, task, tr).failure_class == "user_error"


def test_llm_agent_with_llm_user_completes_the_task(shop, model_server):
    url, _ = model_server
    task = shop.task("refund-damaged")
    tr = run_episode(shop, task, LLMWorldAgent("agent-model", url), simulator=LLMUser("user-model", url))
    v = verdict(shop, task, tr)
    assert [c.tool for c in tr.calls] == ["get_order", "refund_order"]
    assert v.state_match and v.reward == 1.0 and v.failure_class == "completed", v.flags


def test_cli_world_run_with_llm_agent_and_user(model_server, tmp_path, capsys):
    from groundeval.cli.main import main

    url, _ = model_server
    out = tmp_path / "llm"
    args = ["worlds", "run", str(SHOP), "--agent", "openai:agent-model", "--base-url", url]
    args += ["--simulator", "llm:user-model", "--out", str(out)]
    main(args)
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    by_task = {v["task_id"]: v for v in verdicts}
    assert by_task["refund-damaged"]["reward"] == 1.0
    traces = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    assert {t["simulator"] for t in traces} == {"llm:user-model"} and {t["agent"] for t in traces} == {
        "openai:agent-model"
    }


def test_run_world_passes_the_llm_options_and_selects_tasks(model_server, tmp_path, capsys):
    """``groundeval run WORLD`` takes the LLM agent's options as it does for a pack (--base-url,
    --max-tokens, --temperature, --cache) and selects tasks by --question-id / --limit."""
    from groundeval.cli.main import main

    url, state = model_server
    cache = tmp_path / "cache"
    args = ["run", str(SHOP), "--agent", "openai:agent-model", "--base-url", url, "--max-tokens", "64"]
    args += ["--temperature", "0.5", "--cache", str(cache), "--question-id", "refund-*", "--limit", "1"]
    main([*args, "--out", str(tmp_path / "a")])
    first = (tmp_path / "a" / "traces.jsonl").read_text().splitlines()
    assert [json.loads(t)["task_id"] for t in first] == ["refund-damaged"]
    sent = [p for p in state["payloads"] if "tools" in p]
    assert sent and all(p["max_tokens"] == 64 and p["temperature"] == 0.5 for p in sent)
    asked = state["requests"]
    main([*args, "--out", str(tmp_path / "b")])  # a replay: every request answered by the cache
    assert state["requests"] == asked
    again = (tmp_path / "b" / "traces.jsonl").read_text().splitlines()
    strip = ("run_id", "started_at", "ended_at", "duration_s", "wall_s")
    same = [{k: v for k, v in json.loads(t).items() if k not in strip} for t in again]
    assert same == [{k: v for k, v in json.loads(t).items() if k not in strip} for t in first]


@pytest.mark.parametrize(
    ("extra", "named"),
    [(["--track", "silence"], "--track"), (["--db", "w.duckdb"], "--db"), (["--mode", "context"], "--mode")],
)
def test_run_world_refuses_options_of_a_pack(tmp_path, capsys, extra, named):
    from groundeval.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["run", str(SHOP), "--agent", "gold", "--out", str(tmp_path / "o"), *extra])
    assert exc.value.code == 2 and named in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_run_world_question_id_matching_nothing_is_a_usage_error(tmp_path, capsys):
    from groundeval.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["eval", str(SHOP), "--agent", "gold", "--out", str(tmp_path / "o"), "--question-id", "nope*"])
    assert exc.value.code == 2 and "no task of the world matches nope*" in capsys.readouterr().err
