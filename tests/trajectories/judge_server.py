"""A real local OpenAI-compatible HTTP server scripted to answer LLM-judge prompts about
natural-language assertions (used by tests/trajectories and tests/extras/tau2).

It answers two kinds of prompt:

* groundeval's (``groundeval.trajectories.judge``): the numbered statements after
  ``Statements:`` — a ``{"verdicts": [...]}`` object, one verdict per number;
* τ²'s own evaluator's: the assertions it was told about (``known``) found in the prompt, in the
  order they appear — a ``{"results": [...]}`` object with τ²'s field names.

A statement is met unless it contains one of the words in ``fail`` (case-insensitive), so both
prompts get the same decision for the same assertion. ``bad_replies`` makes the next n replies
unreadable text; ``status`` makes every reply that HTTP status; ``delay`` (seconds) holds each
reply, and ``most_in_flight`` is the most requests it held at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_STATEMENT = re.compile(r"^(\d+)\. (.*)$")


def groundeval_statements(prompt: str) -> list[tuple[int, str]] | None:
    """The numbered statements of groundeval's judge prompt, or None when it is not one."""
    if "\nStatements:\n" not in prompt:
        return None
    tail = prompt.rsplit("\nStatements:\n", 1)[1]
    out = []
    for line in tail.splitlines():
        m = _STATEMENT.match(line)
        if m is None:
            break
        out.append((int(m.group(1)), m.group(2)))
    return out


class JudgeServer:
    def __init__(self, known: list[str] | None = None):
        self.known = list(known or [])
        self.fail: set[str] = set()
        self.bad_replies = 0
        self.status = 200
        self.delay = 0.0
        self.in_flight = 0
        self.most_in_flight = 0
        self.requests = 0
        self.kinds: list[str] = []
        self.payloads: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def met(self, statement: str) -> bool:
        low = statement.lower()
        return not any(w.lower() in low for w in self.fail)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.requests += 1
            self.payloads.append(body)
            if self.status != 200:
                return self.status, {"error": {"message": f"scripted status {self.status}"}}
            bad = self.bad_replies > 0
            if bad:
                self.bad_replies -= 1
        prompt = "\n".join(m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user")
        ours = groundeval_statements(prompt)
        if bad:
            content = "All of the statements look fine to me."
            self.kinds.append("bad")
        elif ours is not None:
            self.kinds.append("groundeval")
            content = json.dumps(
                {
                    "verdicts": [
                        {
                            "id": i,
                            "met": self.met(s),
                            "justification": f"scripted: {'met' if self.met(s) else 'not met'}",
                        }
                        for i, s in ours
                    ]
                }
            )
        else:
            self.kinds.append("tau2")
            found = sorted((prompt.find(a), a) for a in self.known if a in prompt)
            content = json.dumps(
                {
                    "results": [
                        {"expectedOutcome": a, "reasoning": "scripted", "metExpectation": self.met(a)} for _, a in found
                    ]
                }
            )
        return 200, {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "judge"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with server.lock:
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                    server.headers.append(dict(self.headers))
                time.sleep(server.delay)
                status, reply = server.answer(body)
                with server.lock:
                    server.in_flight -= 1
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        return Handler

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
