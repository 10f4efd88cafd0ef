"""Pydantic AI: the episode's tools as ``pydantic_ai.Tool`` objects built from groundeval's
schemas, and the agent that records every call the model makes.

``Tool.from_schema`` declares the JSON Schema as it is and skips Pydantic AI's own argument
validation, so the episode sees whatever object the model sent. The reply goes back as the tool
return (a JSON text). But Pydantic AI answers two kinds of call itself, with its own retry
prompt, before any tool runs: a name the request did not declare, and arguments that are not a
JSON object. No tool can see those; the model can: :class:`WorldModel` wraps the agent's model
and sends each such call of a response to the episode as it was sent (the model then reads
Pydantic AI's retry prompt). So build the agent with :func:`gated_agent`, which takes
``pydantic_ai.Agent``'s arguments and installs both: ``gated_agent(model, episode,
instructions=...)``. It serves a pack question episode (:func:`gated_tools`) and a world
episode (:func:`world_tools`).

Worlds: :class:`WorldAgent` (one ``run_sync`` per user message, ``message_history`` kept, the
output said to the user), which runs the agent ``build`` returns through :class:`WorldModel`.
"""

from __future__ import annotations

from collections.abc import Callable
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

require("pydantic-ai", "pydantic_ai")

from pydantic_ai import Agent, Tool  # noqa: E402
from pydantic_core import SchemaValidator, core_schema  # noqa: E402
from pydantic_ai.models.wrapper import WrapperModel  # noqa: E402

__all__ = ["WorldAgent", "WorldModel", "gated_agent", "gated_tools", "world_tools"]


def _tool(gated: GatedTool | WorldTool) -> Tool:
    def run(**arguments: Any) -> str:
        return gated.text(arguments)

    async def prepare(ctx: Any, tool_def: Any) -> Any:
        if not _records(getattr(ctx, "model", None), gated.episode):
            warn_unrecorded(
                gated.episode,
                "a Pydantic AI run whose model is not groundeval.adapters.pydantic_ai.WorldModel (build the "
                "agent with gated_agent): tool names it lacks and arguments that are not a JSON object are "
                "not recorded",
            )
        return tool_def

    out = Tool.from_schema(run, name=gated.name, description=gated.description, json_schema=gated.parameters)
    # any object, as from_schema's own validator; but JSON that is not an object (a list, a string,
    # null) is refused here with Pydantic AI's retry prompt, where WorldModel records it as sent
    # (from_schema's any-schema passed it on to the call, which raised on **list)
    out.function_schema.validator = SchemaValidator(core_schema.dict_schema())
    out.prepare = prepare
    # the episode's step budget limits the calls it refuses, as on every other route (Pydantic AI's
    # default of 1 retry ended the run on a second refused call in a row)
    out.max_retries = gated.episode.max_steps
    return out


def _records(model: Any, episode: Any) -> bool:
    """Whether ``model`` (or a model it wraps) is a :class:`WorldModel` for ``episode``."""
    seen = 0
    while model is not None and seen < 16:
        if isinstance(model, WorldModel) and model.episode is episode:
            return True
        model, seen = getattr(model, "wrapped", None), seen + 1
    return False


def gated_tools(episode: Episode) -> list[Tool]:
    """The episode's tools for its mode (what :func:`gated_agent` gives the agent; an agent of your
    own records every call only with ``model=WorldModel(model, episode)``)."""
    return [_tool(g) for g in _core_tools(episode)]


def world_tools(episode: Any, *, say_to_user: bool = True) -> list[Tool]:
    """``Agent(model, tools=world_tools(episode), instructions=episode.policy)``: a world
    episode's tools (and ``say_to_user``); run with :class:`WorldModel` (as :func:`gated_agent`
    and :class:`WorldAgent` do) so the calls Pydantic AI refuses itself are recorded too."""
    return [_tool(t) for t in _core_world_tools(episode, say_to_user=say_to_user)]


class WorldModel(WrapperModel):
    """The agent's model, recording what Pydantic AI answers without a tool: a call to a name
    the request did not declare, or to a world tool with arguments that are not a JSON object.
    ``episode``: a world episode, or a pack question episode (``Agent(model,
    tools=gated_tools(episode))`` run with ``model=WorldModel(model, episode)``)."""

    def __init__(self, wrapped: Any, episode: Any):
        super().__init__(wrapped)
        self.episode = episode
        tools = _core_tools(episode) if isinstance(episode, Episode) else _core_world_tools(episode)
        self.world_names = {t.name for t in tools}

    async def request(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> Any:
        response = await super().request(messages, model_settings, model_request_parameters)
        declared = {t.name for t in [*model_request_parameters.function_tools, *model_request_parameters.output_tools]}
        for part in response.parts:
            if getattr(part, "part_kind", None) != "tool-call":
                continue
            unknown = part.tool_name not in declared
            unparsable = part.tool_name in self.world_names and part.args is not None
            unparsable = unparsable and not isinstance(parse_arguments(part.args), dict)
            if unknown or unparsable:
                world_call(self.episode, part.tool_name, part.args)
        return response


def _recording(model: Any, episode: Any) -> Any:
    """``model`` wrapped in a :class:`WorldModel` for ``episode``, unless it already records it."""
    return model if _records(model, episode) else WorldModel(model, episode)


def gated_agent(model: Any, episode: Any, *, tools: Any = (), say_to_user: bool = True, **kwargs: Any) -> Agent:
    """``pydantic_ai.Agent(model, tools=..., **kwargs)`` holding the episode's tools (before any
    ``tools`` of your own) and running through :class:`WorldModel`, so every call the model
    makes reaches the episode as sent. ``episode``: a pack question episode (its tools for its
    mode) or a world episode (its tools, and ``say_to_user`` unless ``say_to_user=False``).
    ``retries`` defaults to the episode's step budget (Pydantic AI's 1 would end the run on a
    second refused call in a row, where the Python API records it and goes on)."""
    own = gated_tools(episode) if isinstance(episode, Episode) else world_tools(episode, say_to_user=say_to_user)
    kwargs.setdefault("retries", episode.max_steps)  # for names the agent lacks too; see _tool
    return Agent(_recording(model, episode), tools=[*own, *tools], **kwargs)


class WorldAgent(FrameworkWorldAgent):
    """A world agent from ``build(tools, episode) -> pydantic_ai.Agent`` (give it
    ``instructions=episode.policy``): one ``run_sync`` per user message through
    :class:`WorldModel`, the message history kept; the output is said to the user."""

    def turns(self, episode: Any) -> Callable[[str], Any]:
        agent = self.build(world_tools(episode, say_to_user=self.say_to_user), episode)
        model = _recording(agent.model, episode)
        history: list[Any] | None = None

        def turn(text: str) -> Any:
            nonlocal history
            result = agent.run_sync(text, message_history=history, model=model)
            history = result.all_messages()
            return result.output

        return turn
