"""The MCP server: many episodes over one store, on stdio or streamable HTTP.

:class:`EpisodeHub` is transport-free: it starts episodes, routes each tool call to
its episode (naming it by ``episode_id``) and appends the trace when the episode
ends. :func:`build_server` wraps the hub in the official ``mcp`` SDK's low-level
server; tool arguments reach the episode as sent (no SDK-side validation), so a
wrong type is recorded in the trace like any other agent mistake.
"""

from __future__ import annotations

import json
import secrets
import threading
from pathlib import Path
from typing import Any

from ..questions.model import Question
from ..store.search_sql import fetch_index
from ..trace.io import append_trace
from ..trace.model import Trace
from .episode import MODES, Episode
from .tools import EPISODE_TOOLS, mcp_tools

_EPISODE_TOOL_NAMES = {t["name"] for t in EPISODE_TOOLS}


class HubError(Exception):
    """A call the hub cannot route (unknown question or episode): reported to the client as a tool error."""


class EpisodeHub:
    """Running episodes of one server, each behind its own lock; traces appended as they end."""

    def __init__(self, store, questions: list[Question], *, traces: str | Path | None = None, max_steps: int = 30,
                 context_budget_chars: int = 20000):
        self.store = store
        self.questions = {q.id: q for q in questions}
        self.order = [q.id for q in questions]
        self.traces_path = Path(traces) if traces else None
        self.max_steps = max_steps
        self.context_budget_chars = context_budget_chars
        self.finished: list[Trace] = []
        self._episodes: dict[str, Episode] = {}
        self._lock = threading.Lock()
        store.ensure_fts()  # build shared indexes before concurrent calls arrive
        fetch_index(store)

    def list_questions(self) -> dict[str, Any]:
        return {"questions": [{"question_id": q.id, "track": q.track, "text": q.text}
                              for q in (self.questions[i] for i in self.order)]}

    def start(self, arguments: dict[str, Any]) -> dict[str, Any]:
        qid, mode, agent = arguments.get("question_id"), arguments.get("mode", "tool"), arguments.get("agent")
        if not isinstance(qid, str) or qid not in self.questions:
            raise HubError("unknown question_id; call list_questions")
        if mode not in MODES:
            raise HubError(f"mode must be one of {', '.join(MODES)}")
        if agent is not None and not isinstance(agent, str):
            raise HubError("agent must be a string")
        ep = Episode(self.store, self.questions[qid], mode, agent=agent, max_steps=self.max_steps,
                     context_budget_chars=self.context_budget_chars)
        episode_id = secrets.token_hex(8)
        with self._lock:
            self._episodes[episode_id] = ep
        return {"episode_id": episode_id, **ep.public_question()}

    def _episode(self, arguments: dict[str, Any]) -> tuple[str, Episode]:
        eid = arguments.get("episode_id")
        with self._lock:
            ep = self._episodes.get(eid) if isinstance(eid, str) else None
        if ep is None:
            raise HubError("unknown or finished episode_id; call start_episode")
        return eid, ep

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Route one MCP tool call. Episode tools (and unknown names given an episode) are recorded."""
        if tool == "list_questions":
            return self.list_questions()
        if tool == "start_episode":
            return self.start(arguments)
        eid, ep = self._episode(arguments)
        if tool == "get_context":
            return {"context": ep.context()}
        if tool == "end_episode":
            self._finish(eid, ep)
            return {"status": "ended", "trace_status": ep.trace.status}
        rest = {k: v for k, v in arguments.items() if k != "episode_id"}
        reply = ep.call(tool, rest)
        if ep.done:
            self._finish(eid, ep)
        return reply

    def _finish(self, eid: str, ep: Episode) -> None:
        with self._lock:
            if self._episodes.pop(eid, None) is None:
                return
        trace = ep.close()
        self.finished.append(trace)
        if self.traces_path is not None:
            append_trace(self.traces_path, trace)

    def close(self) -> None:
        """End every open episode (their traces are written as ``no_answer``)."""
        with self._lock:
            open_ = sorted(self._episodes.items())
        for eid, ep in open_:
            self._finish(eid, ep)


def build_server(hub: EpisodeHub):
    """An ``mcp`` low-level Server exposing the hub's tools."""
    import anyio
    import mcp_types as types
    from mcp.server import Server

    tools = [types.Tool(name=t["name"], description=t["description"], input_schema=t["input_schema"])
             for t in mcp_tools()]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        try:
            reply = await anyio.to_thread.run_sync(hub.call, params.name, arguments)
            is_error = False
        except HubError as exc:
            reply, is_error = {"status": "error", "error": str(exc)}, True
        text = json.dumps(reply, sort_keys=True, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=reply, is_error=is_error)

    return Server("groundeval", version=_version(), on_list_tools=list_tools, on_call_tool=call_tool,
                  instructions="Answer groundeval questions: list_questions, start_episode, then "
                               "search_artifacts / fetch_artifact and finally submit_answer.")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("groundeval")
    except PackageNotFoundError:
        return "0"


async def serve_stdio(hub: EpisodeHub) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(hub)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        hub.close()


async def serve_http(hub: EpisodeHub, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Streamable HTTP at ``http://host:port/mcp`` (loopback by default)."""
    import uvicorn

    app = build_server(hub).streamable_http_app(host=host)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    try:
        await server.serve()
    finally:
        hub.close()
