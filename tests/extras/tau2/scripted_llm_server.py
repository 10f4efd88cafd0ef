"""A real local OpenAI-compatible HTTP server that plays both models of a τ² run: the agent and
τ²'s user simulator (used by test_tau2_own_runner.py, where τ²'s own runner calls it through
litellm as ``openai/<model>`` with ``api_base``).

The model name says who is asked:

* ``user`` — τ²'s user simulator. Its system prompt holds the task's scenario; the server finds
  which of the ``scenarios`` it is, makes the calls of ``user_plans[ref]`` with its own tools (a
  telecom user's phone; one per request), then opens with ``Hello, this is request [ref <ref>].``; asked
  again (its own opening is in the history, as an ``assistant`` message: τ² flips the roles),
  it thanks and ends with τ²'s stop token ``###STOP###``.
* ``agent-<variant>`` — the agent. It finds the ``[ref <ref>]`` the user said, then makes the
  calls of ``plans[ref][variant]`` (``plans[ref]["gold"]`` when the variant has no plan for that
  ref), one call per request, counting the tool calls it already made after the opening; then
  it says ``closing[ref]``. With no user (τ²'s solo agent), the ref is the one of the ``scenarios``
  text found in the agent's system prompt (there: the task's ticket). A step of a plan is one call ``(name, arguments)`` or a message
  ``{"calls": [(name, arguments), ...], "content": text}``: several calls at once (τ² answers
  each), with text beside them.

Every request body is kept (``requests``). No model weights, no network beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STOP = "###STOP###"  # τ²'s user-simulator stop token (tau2.user.base.STOP)
_REF = re.compile(r"\[ref (\w+)\]")

Call = tuple[str, dict[str, Any]]
Step = Call | dict[str, Any]  # one call, or {"calls": [Call, ...], "content": text said with them}


class ScriptedTau2Server:
    def __init__(
        self,
        scenarios: dict[str, str],
        plans: dict[str, dict[str, list[Step]]],
        closing: dict[str, str],
        user_plans: dict[str, list[Call]] | None = None,
    ):
        self.scenarios = dict(scenarios)  # scenario text -> ref
        self.plans = plans
        self.closing = closing
        self.user_plans = user_plans or {}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def _user(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        system = "\n".join(m.get("content") or "" for m in messages if m.get("role") == "system")
        found = [(len(text), ref) for text, ref in self.scenarios.items() if text in system]
        if not found:
            return {"role": "assistant", "content": f"I cannot tell which scenario this is. {STOP}"}
        ref = max(found)[1]
        own = [m for m in messages if m.get("role") == "assistant"]  # τ² flips the roles: the user's own turns
        made = sum(1 for m in own if m.get("tool_calls"))
        todo = self.user_plans.get(ref, [])
        if made < len(todo):
            name, args = todo[made]
            call = {
                "id": f"ucall_{made}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        said = any(_REF.search(m.get("content") or "") for m in own)
        if said:
            return {"role": "assistant", "content": f"Thank you, that is all. {STOP}"}
        return {"role": "assistant", "content": f"Hello, this is request [ref {ref}]."}

    def _agent(self, variant: str, messages: list[dict[str, Any]], n: int) -> dict[str, Any]:
        start, ref = None, None
        for i, m in enumerate(messages):
            hit = _REF.search(m.get("content") or "") if m.get("role") == "user" else None
            if hit is not None:
                start, ref = i, hit.group(1)
        if ref is None:  # τ²'s solo agent: no user; the task's ticket is in its system prompt
            system = "\n".join(m.get("content") or "" for m in messages if m.get("role") == "system")
            found = [(len(text), r) for text, r in self.scenarios.items() if text in system]
            start, ref = 0, max(found)[1] if found else None
        if ref is None or ref not in self.plans:
            return {"role": "assistant", "content": "How can I help you?"}
        plan = self.plans[ref].get(variant, self.plans[ref]["gold"])
        made = sum(1 for m in messages[start:] if m.get("role") == "assistant" and m.get("tool_calls"))
        if made >= len(plan):
            return {"role": "assistant", "content": self.closing[ref]}
        step = plan[made]
        step = step if isinstance(step, dict) else {"calls": [step]}
        calls = [
            {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(step["calls"])
        ]
        return {"role": "assistant", "content": step.get("content"), "tool_calls": calls}

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            n = len(self.requests)
        model = str(body.get("model", ""))
        messages = body.get("messages") or []
        if model == "user":
            message = self._user(messages)
        elif model.startswith("agent-"):
            message = self._agent(model[len("agent-") :], messages, n)
        else:
            message = {"role": "assistant", "content": f"unknown model {model!r}"}
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1767225600,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                data = json.dumps(server.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        return Handler

    def __enter__(self) -> ScriptedTau2Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
