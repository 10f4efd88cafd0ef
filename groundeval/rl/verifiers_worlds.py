"""A ``verifiers`` (0.4, ``verifiers.v1``) environment for *worlds*: multi-turn episodes with a
simulated user, the world's tools served per rollout, the world verdict as the rubric. Extra
``verifiers``; install it in a venv of its own (it pins ``mcp==2.0.0``, groundeval's ``mcp``
extra needs ``mcp>=2.3``). The pack environment is :mod:`.verifiers_env`.

After ``import groundeval.rl.verifiers_worlds`` the id ``groundeval_worlds`` names both the
taskset and the harness:

* :class:`WorldTaskset` — one task per task of ``world`` (a world folder, a bundled world's
  name, or ``tau2:<domain>`` with the tau2 extra), in the world's task order; the system prompt
  is the instructions and the world's policy, the prompt the user's opening;
* :class:`WorldToolset` — an MCP tool server per rollout (``python -m`` this module) holding one
  :class:`~groundeval.worlds.episode.WorldEpisode` (the deterministic user simulator, or a
  model playing the user: ``simulator="llm:<model>"``, ``user_base_url``). It lists
  the world's tools (their JSON Schemas and read/write annotations) and ``say_to_user``, and
  serves **every** ``tools/call`` — a name the world does not have, arguments text that is not
  JSON (:data:`~.verifiers_common.ARGUMENTS_META`), arguments of the wrong types — through
  :func:`groundeval.adapters.core.world_call`, recorded as the Python API records the same call.
  After every call the episode's trace goes into the rollout state (``state.ge_world_trace``:
  :meth:`WorldEpisode.snapshot`, the finished trace once the user stopped or the step budget
  ran out); the reply's ``_meta`` says whether the episode is over (:data:`DONE_META`);
* :class:`WorldTask` — its reward (weight 1) is :func:`groundeval.rl.world_reward.world_rl_reward`
  of the verdict (``reward x score x (1 - v_rl)^2``: 0 when τ² gives 0, padding cannot raise it),
  its metrics (unweighted) the verdict's numbers (:func:`~groundeval.rl.world_reward.world_metrics`):
  all from :func:`groundeval.worlds.verdict.verdict` of the recorded trace, the function
  ``groundeval worlds score`` runs;
* :class:`WorldChatHarness` — an in-process chat loop: the model's tool calls go to the tool
  server by the name and with the arguments text it wrote; a reply with no tool call is said to
  the user (as ``groundeval``'s own model agent says it) and the user's reply is the next user
  message. It ends when the user stops, the step budget is spent, the model says nothing, or
  after ``max_turns`` model replies.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import verifiers.v1 as vf

from ..adapters.core import SAY_DESCRIPTION, SAY_PARAMETERS, SAY_TO_USER
from .verifiers_common import DONE_META, ChatHarness, raw_arguments

__all__ = ["DONE_META", "WorldChatHarness", "WorldTask", "WorldTaskset", "WorldToolset"]

# verifiers loads a plugin by a bare module name: importing this module makes it loadable as PLUGIN_ID
PLUGIN_ID = "groundeval_worlds"
sys.modules.setdefault(PLUGIN_ID, sys.modules[__name__])
AGENT = "verifiers"
INSTRUCTIONS = (
    "You are the agent of the service below, talking with a user. Act with the tools; talk to the "
    "user with say_to_user (ask for confirmation of a write with confirm: {tool, arguments}; say "
    "done: true when finished) or by replying with plain text, whose answer comes back as the "
    "user's next message. Follow the policy.\n\nPolicy:\n"
)


class WorldData(vf.TaskData):
    """One task of one world: what the tool server needs to open its episode (and its user)."""

    world: str
    task_id: str
    simulator: str = "deterministic"
    user_base_url: str | None = None
    user_api_key_env: str | None = None


class WorldRolloutState(vf.State):
    """The rollout state the tool server keeps current: the recorded world trace."""

    ge_world_trace: dict[str, Any] | None = None


class WorldToolsetConfig(vf.ToolsetConfig):
    pass


_WORLDS: dict[str, Any] = {}


def _world(name: str) -> Any:
    """A world, loaded once per process (the tool server and the scorer each hold one)."""
    from ..worlds import load_world

    if name not in _WORLDS:
        _WORLDS[name] = load_world(name)
    return _WORLDS[name]


def _simulator(spec: str, base_url: str | None, api_key_env: str | None) -> Any:
    """The user simulator ``spec`` names: ``deterministic`` (None: the episode's default) or
    ``llm:<model>`` on the OpenAI-compatible server at ``base_url``; anything else a
    :class:`~groundeval.errors.UsageError` naming the config field."""
    from ..errors import UsageError

    if spec == "deterministic":
        return None
    if spec.startswith("llm:") and spec[4:]:
        from ..worlds.llm import LLMUser

        return LLMUser(spec[4:], base_url or "https://api.openai.com/v1", api_key_env=api_key_env)
    raise UsageError.single("taskset.simulator", f"deterministic or llm:<model>, not {spec!r}")


def _tool_list(world: Any) -> list[dict[str, Any]]:
    """What ``tools/list`` tells the model: the world's tools, then ``say_to_user``."""
    from ..worlds.tools import tool_infos

    out = [
        {"name": t["name"], "description": t["description"], "schema": t["parameters"], "hints": t["annotations"]}
        for t in tool_infos(world.manifest.tools)
    ]
    hints = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}
    out.append({"name": SAY_TO_USER, "description": SAY_DESCRIPTION, "schema": SAY_PARAMETERS, "hints": hints})
    return out


class WorldToolset(vf.Toolset[WorldToolsetConfig, WorldRolloutState]):
    """A world's tools and ``say_to_user`` over MCP, one episode per rollout."""

    TOOL_PREFIX = None  # the tools keep the world's own names

    def __init__(self, config: WorldToolsetConfig) -> None:
        super().__init__(config)
        self.world: Any = None
        self.episode: Any = None

    async def setup_task(self, task: Any) -> None:
        from ..worlds.episode import WorldEpisode

        self.world = _world(task.world)
        sim = _simulator(task.simulator, task.user_base_url, task.user_api_key_env)
        self.episode = WorldEpisode(self.world, self.world.task(task.task_id), simulator=sim, agent=AGENT)

    def register(self, mcp: Any) -> None:
        """``tools/list`` gives :func:`_tool_list`; every ``tools/call`` — any name, any arguments —
        goes to :meth:`_serve_call` (the MCP server's own path would refuse an unknown name and
        arguments that fail the schema before the episode could record them)."""
        mcp.list_tools = self._list_tools
        mcp.call_tool = self._with_state(self._serve_call)

    async def _list_tools(self) -> list[Any]:
        from mcp.types import Tool, ToolAnnotations

        if self.world is None:
            return []
        return [
            Tool(
                name=t["name"],
                description=t["description"],
                input_schema=json.loads(json.dumps(t["schema"])),
                annotations=ToolAnnotations.model_validate(t["hints"]),
            )
            for t in _tool_list(self.world)
        ]

    async def _serve_call(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """One ``tools/call`` as the episode's call (or message), recorded as sent."""
        from mcp.types import CallToolResult, TextContent

        from ..adapters.core import reply_text, world_call

        if self.episode is None:
            text = "no groundeval world episode: the tool server was started without a task"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        # the raw text goes on unparsed: world_call parses it, once (a JSON string holding JSON
        # text stays the string it is)
        out = world_call(self.episode, name, raw_arguments(context, arguments))
        ep = self.episode
        self.state.ge_world_trace = (ep.finish() if ep.done else ep.snapshot()).model_dump(mode="json")
        return CallToolResult(
            content=[TextContent(type="text", text=reply_text(out))],
            is_error=not out.get("ok", False),
            _meta={DONE_META: ep.done},
        )


class WorldTaskConfig(vf.TaskConfig):
    toolset: WorldToolsetConfig = WorldToolsetConfig()


def _verdict(task: Any, trace: Any) -> Any:
    """The verdict of the rollout's recorded world trace (None: the tool server recorded nothing)."""
    from ..worlds.model import WorldTrace
    from ..worlds.verdict import verdict

    data = getattr(trace.state, "ge_world_trace", None)
    if data is None:
        return None
    world = _world(task.world)
    return verdict(world, world.task(task.task_id), WorldTrace.model_validate(data))


class WorldTask(vf.Task[WorldData, WorldRolloutState, WorldTaskConfig]):
    """A world task: the world's tools and simulated user, the verdict's rewards."""

    NEEDS_CONTAINER = False

    @classmethod
    def toolsets(cls, config: WorldTaskConfig) -> list[Any]:
        return [WorldToolset(config.toolset)]

    @vf.reward(weight=1.0)
    async def rl_reward(self, task: WorldData, trace: Any) -> float:
        """:func:`groundeval.rl.world_reward.world_rl_reward` of the verdict (0.0 when nothing
        was recorded: no call, no message)."""
        from .world_reward import world_rl_reward

        v = _verdict(task, trace)
        return 0.0 if v is None else world_rl_reward(v)

    @vf.metric
    async def groundeval(self, task: WorldData, trace: Any) -> dict[str, float]:
        """The verdict's numbers (:func:`groundeval.rl.world_reward.world_metrics`), unweighted."""
        from .world_reward import world_metrics

        v = _verdict(task, trace)
        return {} if v is None else world_metrics(v)


class WorldTasksetConfig(vf.TasksetConfig):
    world: str = "support_desk"
    simulator: str = "deterministic"  # or llm:<model> (a model plays the user at user_base_url)
    user_base_url: str | None = None
    user_api_key_env: str | None = None
    task: WorldTaskConfig = WorldTaskConfig()


def _world_name(name: str) -> str:
    """A world folder as an absolute path (the tool server runs in another working directory
    maybe); a bundled world's name and ``tau2:<domain>`` as they are."""
    path = Path(name)
    return str(path.resolve()) if path.exists() else name


class WorldTaskset(vf.Taskset[WorldTask, WorldTasksetConfig]):
    """One task per task of ``config.world`` (the world's task order)."""

    def load(self) -> Any:
        name = _world_name(self.config.world)
        cfg = self.config
        _simulator(cfg.simulator, cfg.user_base_url, cfg.user_api_key_env)  # a wrong name fails here, not per rollout
        world = _world(name)
        for t in world.tasks:
            data = WorldData(
                id=t.id,
                name=t.id,
                system_prompt=INSTRUCTIONS + world.policy,
                prompt=t.user.opening,
                world=name,
                task_id=t.id,
                simulator=cfg.simulator,
                user_base_url=cfg.user_base_url,
                user_api_key_env=cfg.user_api_key_env,
            )
            yield WorldTask(data, self.config.task)


class WorldChatHarness(ChatHarness):
    """Chat completions with tool calls, plain replies said to the simulated user (in process)."""

    HOME = SAY_TO_USER
    SAY = SAY_TO_USER


if __name__ == "__main__":
    WorldToolset.run()
