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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from ..runtime.episode import Episode
from .core import GatedTool, gated_tools as _core_tools, require

require("agent-framework", "agent_framework")

from agent_framework import FunctionInvocationContext, FunctionMiddleware, FunctionTool  # noqa: E402

__all__ = ["GatedMiddleware", "gated_tools"]


# set by GatedMiddleware for one call; the tool marks it when its body starts
_STARTED: ContextVar[list[bool] | None] = ContextVar("groundeval_gated_call_started", default=None)


def _function_tool(gated: GatedTool) -> FunctionTool:
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
        self._tools = {g.name: g for g in _core_tools(episode)}

    async def process(self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]) -> None:
        gated = self._tools.get(context.function.name)
        if gated is None:
            await call_next()
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
