"""A local OpenAI-compatible chat-completions server that plays a script: the model under test.

Each request to ``POST .../chat/completions`` gets the next turn of the script: a tool call
(``call(name, arguments)``; arguments a dict, or raw text sent as it is) or a text reply
(``say(text)``). Streaming (``"stream": true``) is answered as server-sent events. Every request
body is kept, so a test can read what the framework declared and what it sent back. No model
weights, no network beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "scripted-model"
EXHAUSTED = "(the script has no more turns)"


@dataclass(frozen=True)
class Turn:
    text: str | None = None
    tool: str | None = None
    arguments: str = ""


def call(name: str, arguments: Any) -> Turn:
    """A turn calling ``name``; a dict is sent as JSON, a string exactly as given."""
    return Turn(tool=name, arguments=arguments if isinstance(arguments, str) else json.dumps(arguments))


def say(text: str) -> Turn:
    return Turn(text=text)


@dataclass
class ScriptedLLM:
    script: list[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_turn(self, body: dict[str, Any]) -> tuple[int, Turn]:
        with self._lock:
            self.requests.append(body)
            n = len(self.requests)
            return n, self.script[n - 1] if n <= len(self.script) else say(EXHAUSTED)

    @property
    def exhausted(self) -> bool:
        return len(self.requests) > len(self.script)

    def tool_messages(self) -> list[dict[str, Any]]:
        """The tool results the framework sent back, in order (from the last request)."""
        last = self.requests[-1]["messages"] if self.requests else []
        return [m for m in last if m.get("role") == "tool"]


def _message(n: int, turn: Turn) -> dict[str, Any]:
    if turn.tool is None:
        return {"role": "assistant", "content": turn.text}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_{n}", "type": "function", "function": {"name": turn.tool, "arguments": turn.arguments}}
        ],
    }


def _completion(n: int, turn: Turn, model: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": _message(n, turn),
                "logprobs": None,
                "finish_reason": "stop" if turn.tool is None else "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _chunks(n: int, turn: Turn, model: str, usage: bool) -> list[dict[str, Any]]:
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 1767225600, "model": model}
    if turn.tool is None:
        delta: dict[str, Any] = {"role": "assistant", "content": turn.text}
    else:
        delta = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "index": 0,
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": turn.tool, "arguments": turn.arguments},
                }
            ],
        }
    out = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop" if turn.tool is None else "tool_calls"}],
        },
    ]
    if usage:
        out.append({**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    return out


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
            return
        n, turn = self.server.llm.next_turn(body)
        model = body.get("model") or MODEL
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = "".join(f"data: {json.dumps(c)}\n\n" for c in _chunks(n, turn, model, usage))
            self._send(200, (events + "data: [DONE]\n\n").encode(), "text/event-stream")
        else:
            self._send(200, json.dumps(_completion(n, turn, model)).encode())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    llm: ScriptedLLM


class LLMServer:
    """``with LLMServer(script) as srv:`` — ``srv.base_url`` ends in ``/v1``; ``srv.llm`` has the requests."""

    def __init__(self, script: list[Turn]):
        self.llm = ScriptedLLM(list(script))
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.llm = self.llm
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "LLMServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
