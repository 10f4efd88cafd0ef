"""Helpers for the judge and prose tests: a real local HTTP server speaking the OpenAI
chat-completions protocol from a Python responder. It stands in for the prose model, the
agent and the judge (no mock of our own code)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


def chat_reply(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class LLMServer:
    """Each POST calls ``responder(body)``, which returns the JSON reply (status 200) or a
    ``(status, body)`` pair. Requests are recorded as ``(path, body)``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []
        self.responder: Callable[[Any], Any] = lambda body: (500, {"error": {"message": "no responder"}})
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                with server._lock:
                    server.requests.append((self.path, body))
                try:
                    reply = server.responder(body)
                except Exception as exc:  # a broken responder shows up as a server error
                    reply = (500, {"error": {"message": f"responder failed: {exc!r}"}})
                status, payload = reply if isinstance(reply, tuple) else (200, reply)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def bodies(self) -> list[Any]:
        return [b for _, b in self.requests]
