"""Serving a world's tools over MCP (stdio or streamable HTTP), episodes and all.

:class:`WorldHub` is transport-free: ``start_episode`` opens an episode of a task (the next one
not yet served by default) and gives its id (128 random bits, a capability), the user's opening,
the policy and the tool names; every world tool takes that ``episode_id`` beside its own
arguments; ``say`` talks to the simulated user; ``end_episode`` (or the user's stop) ends the
episode and appends its trace to the traces file. Agent mistakes are tool results with
``isError``, recorded in the trace like any other call (a tool name the world does not have
too). Tools carry MCP's annotations
(read-only, destructive, idempotent hints) from their kind. Needs the ``mcp`` extra.
"""

from __future__ import annotations

import json
import secrets
import threading
from pathlib import Path
from typing import Any

from ..errors import ContractError
from .episode import WorldEpisode
from .load import World
from .model import STOP
from .run import dumps
from .simulator import DeterministicUser, UserSimulator

__all__ = ["RESERVED", "WorldHub", "build_server", "serve_http", "serve_stdio"]

RESERVED = ("start_episode", "say", "end_episode")


class WorldHub:
    def __init__(self, world: World, traces: str | Path, *, simulator: UserSimulator | None = None, max_open: int = 64):
        clash = [t for t in RESERVED if t in world.manifest.tools]
        if clash:
            raise ContractError.single(
                str(world.folder), f"tool names reserved by the MCP server: {', '.join(clash)}", field="tools"
            )
        self.world = world
        self.traces = Path(traces)
        self.traces.parent.mkdir(parents=True, exist_ok=True)
        self.traces.touch()
        self.sim = simulator or DeterministicUser()
        self.max_open = max_open
        self.episodes: dict[str, WorldEpisode] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._owners: dict[str, Any] = {}  # who started each episode (see call)
        self.started: dict[str, int] = {}
        self._lock = threading.Lock()

    # -------------------------------------------------------------- tool specs
    def tool_specs(self) -> list[dict[str, Any]]:
        eid = {"episode_id": {"type": "string", "description": "The id start_episode gave."}}
        specs = [
            {
                "name": "start_episode",
                "description": "Start a conversation with a user for one task (default: the next task not yet served). "
                "Returns the episode id, the user's first message and the policy to follow.",
                "input_schema": {
                    "type": "object",
                    "properties": {"task_id": {"type": "string"}, "agent": {"type": "string"}},
                },
                "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
            },
            {
                "name": "say",
                "description": "Send a message to the user; returns the reply ('###STOP###': the user has left). "
                "To ask for confirmation of a write, pass confirm: {tool, arguments}.",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        **eid,
                        "text": {"type": "string"},
                        "confirm": {"type": "object"},
                        "done": {"type": "boolean"},
                    },
                    "required": ["episode_id", "text"],
                },
                "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
            },
            {
                "name": "end_episode",
                "description": "End the episode (its trace is recorded).",
                "input_schema": {"type": "object", "properties": eid, "required": ["episode_id"]},
                "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
            },
        ]
        from .tools import tool_infos

        for t in tool_infos(self.world.manifest.tools):
            schema = json.loads(json.dumps(t["parameters"]))
            schema["properties"] = {**eid, **schema["properties"]}
            schema["required"] = ["episode_id", *schema["required"]]
            specs.append(
                {
                    "name": t["name"],
                    "description": t["description"],
                    "input_schema": schema,
                    "annotations": t["annotations"],
                }
            )
        return specs

    # -------------------------------------------------------------- calls
    def call(self, name: str, arguments: dict[str, Any], owner: Any = None) -> tuple[dict[str, Any], bool]:
        """(reply, is_error) for one tool call by ``owner`` (the caller's principal over HTTP with
        tokens, else None): an episode answers only the caller that started it; to anyone else
        it is an id that does not exist."""
        if name == "start_episode":
            return self._start(arguments, owner)
        eid = arguments.get("episode_id")
        with self._lock:
            lock = self._locks.get(eid) if isinstance(eid, str) else None
            if lock is not None and self._owners.get(eid) != owner:
                lock = None
        if lock is None:
            if name not in self.world.manifest.tools and name not in RESERVED:
                return {"error": f"unknown tool {name!r} (and no open episode with that id to record it in)"}, True
            return {"error": "no open episode with that id"}, True
        with lock:  # one call at a time per episode (its state is one DuckDB cursor)
            return self._call(eid, name, arguments)

    def _call(self, eid: str, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        with self._lock:
            ep = self.episodes.get(eid)
        if ep is None:  # ended by another call while this one waited
            return {"error": "no open episode with that id"}, True
        args = {k: v for k, v in arguments.items() if k != "episode_id"}
        if name == "say":
            text = args.get("text")
            if not isinstance(text, str):  # not a message: recorded as the invalid call it is (as WorldEnv does)
                out = ep.call(name, args)
                if ep.done:
                    self._end(eid)
                return {"error": out["error"] if ep.done else 'say takes {"text": string, "confirm"?, "done"?}'}, True
            reply = ep.say(text, confirm=args.get("confirm"), done=args.get("done") is True)
            if reply.strip() == STOP or ep.done:
                self._end(eid)
            return {"reply": reply, "done": ep.done}, False
        if name == "end_episode":
            self._end(eid)
            return {"status": "ended"}, False
        out = ep.call(name, args)  # an unknown tool too: recorded as the invalid call it is, as the Python API does
        if ep.done:
            self._end(eid)
        return out, not out["ok"]

    def _start(self, arguments: dict[str, Any], owner: Any = None) -> tuple[dict[str, Any], bool]:
        task_id = arguments.get("task_id")
        with self._lock:
            if len(self.episodes) >= self.max_open:  # each open episode holds a copy of the state
                return {"error": f"{self.max_open} episodes are open: end one first (end_episode)"}, True
            if task_id is None:
                task = next((t for t in self.world.tasks if t.id not in self.started), None)
                if task is None:
                    return {"error": "every task has been served; name one with task_id"}, True
            else:
                task = next((t for t in self.world.tasks if t.id == task_id), None)
                if task is None:
                    return {"error": f"no task {task_id!r}"}, True
            trial = self.started.get(task.id, 0)
            self.started[task.id] = trial + 1
        agent = str(arguments.get("agent") or "mcp-client")
        ep = WorldEpisode(self.world, task, simulator=self.sim, agent=agent, trial=trial)
        eid = secrets.token_hex(16)
        with self._lock:
            self.episodes[eid] = ep
            self._locks[eid] = threading.Lock()
            self._owners[eid] = owner
        reply = {
            "episode_id": eid,
            "task_id": task.id,
            "opening": ep.opening,
            "policy": ep.policy,
            "tools": [t["name"] for t in ep.tools],
        }
        return reply, False

    def _end(self, eid: str) -> None:
        with self._lock:
            ep = self.episodes.pop(eid, None)
            self._locks.pop(eid, None)
            self._owners.pop(eid, None)
        if ep is None:
            return
        trace = ep.finish()
        with self._lock, open(self.traces, "a", encoding="utf-8") as fh:
            fh.write(dumps(trace) + "\n")

    def close(self) -> None:
        with self._lock:
            open_ids = [(eid, self._locks[eid]) for eid in self.episodes]
        for eid, lock in open_ids:
            with lock:
                self._end(eid)


def build_server(hub: WorldHub, transport: str = "stdio"):
    """An ``mcp`` low-level server over the hub; over HTTP each call is its caller's
    (:func:`groundeval.runtime.mcp_server.owner_of`)."""
    import anyio
    import mcp_types as types
    from mcp.server import Server

    from ..runtime.mcp_server import owner_of

    tools = [
        types.Tool(
            name=t["name"],
            description=t["description"],
            input_schema=t["input_schema"],
            annotations=types.ToolAnnotations.model_validate(t["annotations"]),
        )
        for t in hub.tool_specs()
    ]

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        # every name reaches the hub: a tool the world does not have is the agent's mistake, recorded
        # in its episode as an invalid call (the SDK would refuse it before any episode saw it)
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        owner = owner_of(ctx, transport)
        reply, is_error = await anyio.to_thread.run_sync(hub.call, params.name, arguments, owner)
        text = json.dumps(reply, sort_keys=True, ensure_ascii=True, default=str)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=json.loads(text),
            is_error=is_error,
        )

    return Server(
        "groundeval-world",
        instructions=f"World {hub.world.name}: start_episode, then talk with say and act with the tools.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(hub: WorldHub) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(hub)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        hub.close()


async def serve_http(
    hub: WorldHub,
    host: str = "127.0.0.1",
    port: int = 8766,
    *,
    tokens: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
) -> None:
    """Streamable HTTP at ``http://host:port/mcp``, guarded as the pack server is
    (:func:`groundeval.runtime.mcp_server.guarded_http_app`: Host/Origin, body size, tokens)."""
    import uvicorn

    from ..runtime.mcp_server import guarded_http_app

    app = guarded_http_app(
        build_server(hub, "http"), host, tokens=tokens, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins
    )
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    try:
        await server.serve()
    finally:
        hub.close()
