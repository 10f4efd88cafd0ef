"""Every MCP request gets a reply, and agent text UTF-8 cannot hold still reaches the trace.

The ``mcp`` SDK drops a message it cannot parse without a word (over stdio the client
then waits forever): a request nested deeper than its parser allows, one holding a lone
surrogate (``"\\ud800"`` is valid JSON text but not valid Unicode), one that is not
JSON at all. :func:`guard_message` sits in front of the SDK's parser, on stdio lines and
on HTTP bodies alike, and turns each such message into one the SDK can handle:

* a ``tools/call`` whose text holds lone surrogates is passed on with those strings
  escaped (:mod:`groundeval.trace.text`) and their paths named in the reserved argument
  :data:`ESCAPED_ARG`: the episode records the call as ``invalid`` with the escaped text,
  losslessly, and the agent is told why;
* any other message the SDK would drop, when its request ``id`` can be found, becomes a
  request for :data:`REJECT_METHOD`, whose handler answers that id with a JSON-RPC
  ``Invalid Request`` error naming the reason.

Messages the SDK parses pass through untouched (they are checked once more by it).
"""

from __future__ import annotations

import json
from typing import Any

from ..trace.text import escape_all, has_surrogate, surrogate_paths

MAX_MESSAGE_CHARS = 4 * 1024 * 1024  # the SDK's own HTTP body limit, applied to stdio lines too
MAX_BODY_BYTES = 4 * 1024 * 1024  # the SDK's HTTP body limit (DEFAULT_MAX_REQUEST_BODY_SIZE): never buffered past
REJECT_METHOD = "groundeval/rejected"
ESCAPED_ARG = "_groundeval_escaped"
INVALID_REQUEST = -32600


def _sdk_parses(text: str) -> bool:
    import mcp_types as types

    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except Exception:  # noqa: BLE001 - any refusal means the SDK would drop it
        return False
    return True


def _has_surrogate_anywhere(value: Any) -> bool:
    return bool(surrogate_paths(value, limit=1))


def scan_id(text: str) -> int | str | None:
    """The top-level ``"id"`` of a JSON object text that may not parse as a whole
    (too deep, truncated): a single pass tracking strings and nesting."""
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if depth == 1 and text[i : j + 1] == '"id"':
                k = j + 1
                while k < n and text[k] in " \t\r\n":
                    k += 1
                if k < n and text[k] == ":":
                    try:
                        value, _ = json.JSONDecoder().raw_decode(text[k + 1 :].lstrip())
                    except ValueError:
                        return None
                    ok = isinstance(value, (int, str)) and not isinstance(value, bool)
                    return value if ok else None
            i = j + 1
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        i += 1
    return None


def _reject(request_id: int | str | None, reason: str) -> str | None:
    if request_id is None:
        return None  # a notification or garbage: nothing to answer
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": REJECT_METHOD, "params": {"reason": reason}}, ensure_ascii=True
    )


def guard_message(text: str) -> str | None:
    """The message to hand the SDK instead of ``text`` (``text`` itself when it parses),
    or None when nothing can be answered (no request id)."""
    if len(text) > MAX_MESSAGE_CHARS:
        return _reject(scan_id(text[:65536]), f"the message is longer than {MAX_MESSAGE_CHARS} characters")
    if _sdk_parses(text):
        return text
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError):
        return _reject(scan_id(text), "the message is not valid JSON, or nests too deeply")
    if not isinstance(msg, dict):
        return None
    request_id = msg.get("id")
    if not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
        request_id = None
    elif isinstance(request_id, str) and has_surrogate(request_id):
        request_id = None
    if _has_surrogate_anywhere(msg) and request_id is not None:
        params = msg.get("params")
        args = params.get("arguments") if isinstance(params, dict) else None
        paths = surrogate_paths(args) if msg.get("method") == "tools/call" and isinstance(args, dict) else []
        fixed = escape_all(msg)
        if paths:
            fixed["params"]["arguments"][ESCAPED_ARG] = paths
        out = json.dumps(fixed, ensure_ascii=False)
        if _sdk_parses(out):
            return out
    return _reject(request_id, "the message is not a valid JSON-RPC request (too deeply nested, or malformed)")


def register(server) -> None:
    """Answer :data:`REJECT_METHOD` requests on ``server`` with an ``Invalid Request`` error."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    class RejectedParams(types.RequestParams):
        reason: str = "invalid request"

    async def rejected(ctx, params: RejectedParams):
        raise MCPError(code=INVALID_REQUEST, message=params.reason)

    server.add_request_handler(REJECT_METHOD, RejectedParams, rejected)


class GuardedLines:
    """An async line source for ``stdio_server(stdin=...)``: each line through :func:`guard_message`."""

    def __init__(self, source):
        self.source = source

    def __aiter__(self):
        return self._lines()

    async def _lines(self):
        async for line in self.source:
            if not line.strip():
                continue
            out = guard_message(line.rstrip("\r\n"))
            if out is not None:
                yield out + "\n"


class GuardedBodies:
    """ASGI middleware: an HTTP POST body goes through :func:`guard_message` before the SDK.

    The request's headers are judged before a byte of its body is read: Host and Origin
    (``security``, the SDK's own DNS-rebinding checks: 421 / 403) and a declared
    ``Content-Length`` past :data:`MAX_BODY_BYTES` (413). A body that grows past that limit
    while it is read is refused there (413), so one request never costs more than the
    SDK's limit in memory."""

    def __init__(self, app, security=None):
        self.app = app
        self.security = security

    async def __call__(self, scope, receive, send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        refused = await self._refuse_by_headers(scope)
        if refused is not None:
            await refused(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                await _too_large()(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body.lstrip().startswith(b"{"):
            text = body.decode("utf-8", errors="replace")
            guarded = guard_message(text)
            if guarded is not None and guarded != text:
                body = guarded.encode("utf-8")
        first = {"type": "http.request", "body": body, "more_body": False}
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.app(dict(scope, headers=headers), _replay([first], receive), send)

    async def _refuse_by_headers(self, scope):
        """The response refusing this request on its headers alone, or None."""
        from starlette.requests import Request

        if self.security is not None:
            from mcp.server.transport_security import TransportSecurityMiddleware

            refused = await TransportSecurityMiddleware(self.security).validate_request(Request(scope), is_post=True)
            if refused is not None:
                return refused
        declared = Request(scope).headers.get("content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > MAX_BODY_BYTES:
            return _too_large()
        return None


def _too_large():
    from starlette.responses import Response

    return Response(f"Request body too large (more than {MAX_BODY_BYTES} bytes)", status_code=413)


def _replay(messages: list[dict], receive):
    """An ASGI ``receive`` that hands out ``messages`` first, then the real stream."""
    pending = list(messages)

    async def replay():
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
