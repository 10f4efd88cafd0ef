"""Microsoft Agent Framework: the episode's tools as ``agent_framework.FunctionTool`` objects,
plus the middleware that records every call the model makes.

Agent Framework answers some calls itself, so they would never reach the episode: a call to a
name the agent lacks (answered before any function middleware), and arguments that fail its
check against the tool's schema (required names, unknown names, primitive types; text that is
not a JSON object arrives as ``{"raw": text}``). Its hooks for seeing them are middleware, which
tools cannot install, so pass :class:`GatedMiddleware` with the tools:
``Agent(client, tools=gated_tools(ep), middleware=[GatedMiddleware(ep)])``. It is agent
middleware that adds, for each run, a chat middleware (:class:`WorldChatMiddleware`: reads each
model response; a call to a name the request did not declare goes to the episode as sent, and
argument texts that are not a JSON object are noted) and a function middleware
(:class:`WorldMiddleware`: each call to one of the episode's tools runs through the episode,
valid or not, with the text the model sent where Agent Framework has ``{"raw": text}``; other
tools' calls pass on untouched). :func:`world_middleware` gives those two directly, for a chat
client's own middleware. Either serves a pack question episode (:func:`gated_tools`) or a world
episode (:func:`world_tools`). Without any of them, well-formed calls still go through the
episode, but the calls Agent Framework answers itself are not recorded.

Worlds: :class:`WorldAgent` (one ``agent.run`` per user message in one session; the response
text is said to the user) adds :class:`GatedMiddleware` to the agent ``build`` returns, unless
it already records the episode.
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
    warn_unrecorded,
    world_call,
    world_tools as _core_world_tools,
)

require("agent-framework", "agent_framework")

from agent_framework import (  # noqa: E402
    AgentContext,
    AgentMiddleware,
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


# set by the function middleware for one call; the tool marks it when its body starts
_STARTED: ContextVar[list[bool] | None] = ContextVar("groundeval_gated_call_started", default=None)


def _function_tool(gated: GatedTool | WorldTool) -> FunctionTool:
    def run(**arguments: Any) -> str:
        started = _STARTED.get()
        if started is not None:
            started[0] = True
        else:
            warn_unrecorded(
                gated.episode,
                "an Agent Framework agent without groundeval.adapters.agent_framework.GatedMiddleware: "
                "tool names it lacks and arguments its schema check refuses are not recorded",
            )
        return gated.text(arguments)

    return FunctionTool(name=gated.name, description=gated.description, func=run, input_model=gated.parameters)


def gated_tools(episode: Episode) -> list[FunctionTool]:
    """The episode's tools for its mode; use with :class:`GatedMiddleware` on the same episode."""
    return [_function_tool(g) for g in _core_tools(episode)]


class _FunctionMiddleware(FunctionMiddleware):
    """Runs every call to one of the episode's tools through the episode, valid or not; other
    tools' calls pass on untouched."""

    _tools: dict[str, GatedTool | WorldTool]

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
    """A world episode's tools (and ``say_to_user``); use with :class:`GatedMiddleware` (or
    :class:`WorldAgent`, which adds it)."""
    return [_function_tool(t) for t in _core_world_tools(episode, say_to_user=say_to_user)]


class _Unparsed:
    """Argument texts that were not a JSON object, by tool name, as the model sent them."""

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}


class WorldMiddleware(_FunctionMiddleware):
    """The function middleware of :func:`world_middleware`: every call to one of the episode's
    tools (a world episode's or a pack question episode's) runs through the episode, with the
    argument text the model sent where Agent Framework has ``{"raw": text}``."""

    def __init__(self, episode: Any, unparsed: _Unparsed):
        self.episode = episode
        tools = _core_tools(episode) if isinstance(episode, Episode) else _core_world_tools(episode)
        self._tools = {t.name: t for t in tools}
        self._unparsed = unparsed

    def _raw(self, name: str, arguments: Any) -> tuple[bool, Any]:
        if hasattr(arguments, "model_dump"):
            arguments = arguments.model_dump(exclude_unset=True)
        pending = self._unparsed.texts.get(name) or []
        if not (isinstance(arguments, dict) and set(arguments) == {"raw"}):
            return False, None
        # Agent Framework's {"raw": ...} holds the text when it is not JSON, the value when it is
        # JSON but not an object (a list, a string, null)
        raw = arguments["raw"]
        for i, text in enumerate(pending):
            if raw == text or raw == parse_arguments(text):
                del pending[i]
                return True, text
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
    """The chat and the function middleware that record every call the model makes to
    ``episode`` (a world episode, or a pack question episode with ``tools=gated_tools(ep)``), as
    a list for ``middleware=``; :class:`GatedMiddleware` adds them itself."""
    unparsed = _Unparsed()
    return [WorldChatMiddleware(episode, unparsed), WorldMiddleware(episode, unparsed)]


def _records(middleware: Any, episode: Any) -> bool:
    """Whether ``middleware`` (an agent's or a run's) already records ``episode``'s calls."""
    items = middleware if isinstance(middleware, (list, tuple)) else [middleware] if middleware else []
    return any(
        isinstance(m, (GatedMiddleware, WorldChatMiddleware)) and getattr(m, "episode", None) is episode for m in items
    )


class GatedMiddleware(AgentMiddleware):
    """``Agent(client, tools=gated_tools(ep), middleware=[GatedMiddleware(ep)])``: for each run of
    the agent, adds :func:`world_middleware` (a chat and a function middleware) for ``episode``,
    so every call the model makes reaches the episode as sent: calls to the episode's tools,
    valid or not, names the agent lacks, and argument texts that are not a JSON object.
    ``episode``: a pack question episode or a world episode. (It used to be function
    middleware alone, which Agent Framework's own answers to unknown names bypassed.)"""

    def __init__(self, episode: Any):
        self.episode = episode
        self._middleware = world_middleware(episode)

    async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
        present = context.client_kwargs.get("middleware")
        if not _records(present, self.episode):
            items = list(present) if isinstance(present, (list, tuple)) else [present] if present else []
            context.client_kwargs["middleware"] = [*items, *self._middleware]
        await call_next()


class WorldAgent(FrameworkWorldAgent):
    """A world agent from ``build(tools, episode) -> agent_framework.Agent`` (give it
    ``instructions=episode.policy``): one ``agent.run`` per user message in one session; the
    response text is said to the user. The agent gets a :class:`GatedMiddleware` for the
    episode unless its middleware already records it.

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
        if not _records(getattr(agent, "middleware", None), episode):
            # one added for an earlier episode (a build that returns the same agent) goes
            kept = [m for m in agent.middleware or [] if not isinstance(m, GatedMiddleware)]
            agent.middleware = [*kept, GatedMiddleware(episode)]
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
