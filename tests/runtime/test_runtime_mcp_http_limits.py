"""An HTTP request is judged on its headers before its body is read (issue 31 item 7, the
MCP server's part): a wrong Host or Origin (421 / 403) and a declared body past the SDK's
4 MiB limit (413) are answered without waiting for a byte of body, and a body that grows past
the limit while it is read (chunked, no Content-Length) is refused there (413)."""

from __future__ import annotations

import socket

import pytest
from runtime_mcp_helpers import http_server, write_questions
from runtime_questions import at, make_question

from groundeval.runtime.jsonrpc_guard import MAX_BODY_BYTES

QUESTIONS = [make_question(actor="alice", as_of=at(5), qid="q-alice")]


def _head(port: int, host: str, extra: str) -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\n{extra}\r\n"
    ).encode()


def _status(sock: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1])


@pytest.mark.slow
def test_headers_are_judged_before_the_body_is_read(tiny_pack, tiny_store, tmp_path):
    questions = write_questions(tmp_path / "q.json", QUESTIONS, tiny_store.digest)
    with http_server(tiny_pack, questions, "--no-traces") as (url, _):
        port = int(url.split(":")[2].split("/")[0])
        huge = f"Content-Length: {100 * MAX_BODY_BYTES}\r\n"
        for host, extra, want in [
            ("evil.example:80", huge, 421),  # DNS rebinding: refused before any body
            (f"127.0.0.1:{port}", huge + "Origin: http://evil.example\r\n", 403),
            (f"127.0.0.1:{port}", huge, 413),  # declared past the limit
        ]:
            with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
                sock.sendall(_head(port, host, extra))  # and not one byte of the body
                assert _status(sock) == want, (host, extra)
        # chunked, no declared size: refused once the body read passes the limit
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(_head(port, f"127.0.0.1:{port}", "Transfer-Encoding: chunked\r\n"))
            chunk = b"x" * (1 << 20)
            try:
                for _ in range(MAX_BODY_BYTES // len(chunk) + 2):
                    sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            except OSError:  # the server may answer and close before the rest is sent
                pass
            assert _status(sock) == 413
