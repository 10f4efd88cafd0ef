"""A real local HTTP server that speaks a provider protocol from a script of replies."""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest


class ScriptedServer:
    """Each POST pops the next reply: ``(status, headers, body)`` or a callable of the
    request JSON returning one. Requests are recorded as ``(path, headers, json)``."""

    def __init__(self) -> None:
        self.replies: deque = deque()
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                server.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if server.replies:
                    reply = server.replies.popleft()
                    status, headers, payload = reply(body) if callable(reply) else reply
                else:
                    status, headers, payload = 500, {}, {"error": {"message": "script exhausted"}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
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

    def add(self, *replies: tuple[int, dict, Any] | Callable[[Any], tuple[int, dict, Any]]) -> None:
        self.replies.extend(replies)

    def bodies(self) -> list[Any]:
        return [r[2] for r in self.requests]


@pytest.fixture
def scripted_server():
    server = ScriptedServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()
