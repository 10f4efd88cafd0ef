"""Microsoft Agent Framework: the episode's tools as ``agent_framework.FunctionTool`` objects,
plus the function middleware that runs them through the episode.

Agent Framework checks a call against a dict schema before the tool runs (required names,
unknown names, primitive types) and answers a failed check itself, so the call would never
reach the episode. Its supported hook for seeing such calls is function middleware:
:class:`GatedMiddleware` lets each call to a gated tool run as usual (the tool goes through
the episode, and the framework's own telemetry records the call), and when the framework
refuses the arguments before the tool starts, runs the call through the episode itself with
the arguments as the model sent them (the episode records and judges it) and sets the
result. Pass both: ``Agent(client, tools=gated_tools(ep), middleware=[GatedMiddleware(ep)])``.
Without the middleware, well-formed calls still go through the episode, but calls Agent
Framework refuses are not recorded.

Worlds: :func:`world_tools` (the world's tools and ``say_to_user``), :func:`world_middleware`
and :class:`WorldAgent` (one ``agent.run`` per user message in one session; the response text
is said to the user). Agent Framework answers a call to a name the agent lacks itself, before
any middleware of functions, so a chat middleware (:class:`WorldChatMiddleware`) reads each
model response and sends such calls to the episode as they were sent; arguments that are not a
JSON object reach the function middleware as Agent Framework's ``{"raw": text}``, and go to
the episode as the text the model sent.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from ..runtime.episode import Episode
from .core import (
    FrameworkWorldAgent,
    GatedTool,
    WorldTool,
    gated_tools as _core_tools,
    parse_arguments,
    require,
    world_call,
    world_tools as _core_world_tools,
)

require("agent-framework", "agent_framework")

from agent_framework import (  # noqa: E402
    ChatContext,
    ChatMiddleware,
    FunctionInvocationContext,
    FunctionMiddleware,
    FunctionTool,
)

__all__ = [
    "GatedMiddleware",
    "WorldAgent",
    "WorldChatMiddleware",
    "gated_tools",
    "world_middleware",
    "world_tools",
]


# set by GatedMiddleware for one call; the tool marks it when its body starts
_STARTED: ContextVar[list[bool] | None] = ContextVar("groundeval_gated_call_started", default=None)


def _function_tool(gated: GatedTool | WorldTool) -> FunctionTool:
    def run(**arguments: Any) -> str:
        started = _STARTED.get()
        if started is not None:
            started[0] = True
        return gated.text(arguments)

    return FunctionTool(name=gated.name, description=gated.description, func=run, input_model=gated.parameters)


def gated_tools(episode: Episode) -> list[FunctionTool]:
    """The episode's tools for its mode; use with :class:`GatedMiddleware` on the same episode."""
    return [_function_tool(g) for g in _core_tools(episode)]


class GatedMiddleware(FunctionMiddleware):
    """Runs every call to one of ``episode``'s tools through the episode, valid or not; other
    tools' calls pass on untouched."""

    def __init__(self, episode: Episode):
        self._tools: dict[str, GatedTool | WorldTool] = {g.name: g for g in _core_tools(episode)}

    def _raw(self, name: str, arguments: Any) -> tuple[bool, Any]:  # worlds: see WorldMiddleware
        return False, None

    async def process(self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]) -> None:
        gated = self._tools.get(context.function.name)
        if gated is None:
            await call_next()
            return
        unparsed, text = self._raw(gated.name, context.arguments)
        if unparsed:  # the model's text, not Agent Framework's {"raw": text}
            context.result = gated.text(text)
            return
        started = [False]
        token = _STARTED.set(started)
        try:
            await call_next()
            return
        except TypeError:  # the framework's argument check, raised before the tool starts
            if started[0]:
                raise
        finally:
            _STARTED.reset(token)
        arguments = context.arguments
        if hasattr(arguments, "model_dump"):
            arguments = arguments.model_dump(exclude_unset=True)
        context.result = gated.text(dict(arguments) if arguments is not None else {})


# ---------------------------------------------------------------------------------------- worlds


def world_tools(episode: Any, *, say_to_user: bool = True) -> list[FunctionTool]:
    """A world episode's tools (and ``say_to_user``); use with :func:`world_middleware`."""
    return [_function_tool(t) for t in _core_world_tools(episode, say_to_user=say_to_user)]


class _Unparsed:
    """Argument texts that were not a JSON object, by tool name, as the model sent them."""

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}


class WorldMiddleware(GatedMiddleware):
    """:class:`GatedMiddleware` for a world episode's tools (or a pack question episode's)."""

    def __init__(self, episode: Any, unparsed: _Unparsed):
        tools = _core_tools(episode) if isinstance(episode, Episode) else _core_world_tools(episode)
        self._tools = {t.name: t for t in tools}
        self._unparsed = unparsed

    def _raw(self, name: str, arguments: Any) -> tuple[bool, Any]:
        if hasattr(arguments, "model_dump"):
            arguments = arguments.model_dump(exclude_unset=True)
        pending = self._unparsed.texts.get(name) or []
        if isinstance(arguments, dict) and set(arguments) == {"raw"} and arguments["raw"] in pending:
            pending.remove(arguments["raw"])
            return True, arguments["raw"]
        return False, None


class WorldChatMiddleware(ChatMiddleware):
    """Reads each model response: a call to a name the request did not declare goes to the
    episode as sent (Agent Framework answers it without any tool); the argument texts that
    are not a JSON object are noted for :class:`WorldMiddleware`."""

    def __init__(self, episode: Any, unparsed: _Unparsed):
        self.episode = episode
        self._unparsed = unparsed

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        await call_next()
        result = context.result
        if result is None or not hasattr(result, "messages"):
            return  # a stream: its calls are not read here
        declared = {getattr(t, "name", None) for t in (context.options or {}).get("tools") or []}
        for message in result.messages:
            for content in message.contents or []:
                if getattr(content, "type", None) != "function_call":
                    continue
                if content.name not in declared:
                    world_call(self.episode, content.name, content.arguments)
                elif isinstance(content.arguments, str) and not isinstance(parse_arguments(content.arguments), dict):
                    self._unparsed.texts.setdefault(content.name, []).append(content.arguments)


def world_middleware(episode: Any) -> list[Any]:
    """``Agent(client, tools=world_tools(ep), middleware=world_middleware(ep))``: every call the
    model makes reaches the episode as sent. A pack question episode takes it too, with
    ``tools=gated_tools(ep)`` (where :class:`GatedMiddleware` alone lets Agent Framework answer
    an unknown name, and hand a non-JSON argument text on as ``{"raw": text}``)."""
    unparsed = _Unparsed()
    return [WorldChatMiddleware(episode, unparsed), WorldMiddleware(episode, unparsed)]


class WorldAgent(FrameworkWorldAgent):
    """A world agent from ``build(tools, episode) -> agent_framework.Agent`` (give it
    ``instructions=episode.policy`` and ``middleware=world_middleware(episode)``): one
    ``agent.run`` per user message in one session; the response text is said to the user.

    Every run of this agent, of every episode and thread, runs on one event loop of its own (a
    daemon thread; :meth:`close` stops it): a chat client is bound to the loop it first ran on,
    and on another loop Agent Framework silently drops the model's later tool calls."""

    _loop: asyncio.AbstractEventLoop | None = None
    _lock = threading.Lock()

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="groundeval-agent-framework", daemon=True).start()
                self._loop = loop
            return self._loop

    def turns(self, episode: Any) -> Callable[[str], Any]:
        agent = self.build(world_tools(episode, say_to_user=self.say_to_user), episode)
        session = agent.create_session()
        loop = self._event_loop()

        def turn(text: str) -> Any:
            return asyncio.run_coroutine_threadsafe(agent.run(text, session=session), loop).result().text

        return turn

    def close(self) -> None:
        """Stop this agent's event loop (it starts again on the next episode)."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
