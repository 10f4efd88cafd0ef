"""A step-style RL environment over a world, multi-turn, with the simulated user.

``reset(task)`` opens an episode and returns the observation (the user's opening, the policy,
the tool specs, plus a ``say_to_user`` tool: how the policy talks); ``step(action)`` takes
one tool call (any shape ``groundeval.rl.env.parse_tool_call`` reads) — a world tool, or
``say_to_user`` with ``text`` (and optional ``confirm`` / ``done``) — and returns
``(result, done, reward, info)``. The reward is 0.0 until the episode ends (the user stops,
the budget is spent, or ``end()``), then the verdict's RL reward (:func:`groundeval.worlds.reward.rl_reward`:
padding cannot raise it); ``reward="s_adj"`` gives the verdict's ``S_adj`` instead and
``reward="shaped"`` (or ``shaped=True``) ``S_adj x (1 + efficiency) / 2``.
Same actions, same trace, same reward.
"""

from __future__ import annotations

import json
from typing import Any

from ..adapters.core import SAY_TO_USER, say_call
from ..errors import UsageError
from .episode import WorldEpisode
from .load import World
from .model import WorldTask, WorldTrace
from .simulator import UserSimulator
from .reward import REWARDS, shaped_reward, world_reward
from .verdict import verdict

__all__ = ["SAY", "WorldEnv", "say_call", "shaped_reward"]

SAY = SAY_TO_USER
AFTER_DONE = {"ok": False, "result": None, "error": "the episode is over; call reset() for the next one"}


def _parse(action: Any) -> tuple[Any, Any]:
    if isinstance(action, (tuple, list)) and len(action) == 2:
        return action[0], action[1]
    if isinstance(action, dict):
        inner = action.get("function") if isinstance(action.get("function"), dict) else action
        name, args = inner.get("name", inner.get("tool")), inner.get("arguments", inner.get("args"))
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                pass  # not JSON: the text as sent, recorded as WorldEpisode.call records it (issue 30 item 8)
        return name, args
    return action, None


class WorldEnv:
    def __init__(
        self,
        world: World,
        *,
        simulator: UserSimulator | None = None,
        shaped: bool = False,
        agent: str = "policy",
        reward: str = "rl",
    ):
        if reward not in REWARDS:
            raise UsageError.single("reward", f"must be one of {', '.join(REWARDS)}, not {reward!r}")
        self.world = world
        self.simulator = simulator
        self.reward = "shaped" if shaped else reward
        self.shaped = self.reward == "shaped"
        self.agent = agent
        self.episode: WorldEpisode | None = None
        self.task: WorldTask | None = None
        self.final: tuple[float, dict[str, Any]] | None = None

    def __len__(self) -> int:
        return len(self.world.tasks)

    def tool_specs(self) -> list[dict[str, Any]]:
        """OpenAI-style function specs: the world's tools and ``say_to_user``."""
        assert self.episode is not None
        specs = [
            {
                "type": "function",
                "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]},
            }
            for t in self.episode.tools
        ]
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": SAY,
                    "description": "Say something to the user; the reply is the result. Ask for confirmation "
                    "of a write with confirm: {tool, arguments}; say done: true when finished.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "text": {"type": "string"},
                            "confirm": {"type": "object"},
                            "done": {"type": "boolean"},
                        },
                        "required": ["text"],
                    },
                },
            }
        )
        return specs

    def reset(self, task: Any = 0, *, trial: int = 0) -> dict[str, Any]:
        """Start an episode on ``task`` (an index, a task id or a task); the observation."""
        if self.episode is not None and not self.final:
            self.episode.finish()
        if isinstance(task, int) and not isinstance(task, bool):
            t = self.world.tasks[task]
        elif isinstance(task, str):
            t = self.world.task(task)
        else:
            t = task
        self.task, self.final = t, None
        self.episode = WorldEpisode(self.world, t, simulator=self.simulator, agent=self.agent, trial=trial)
        return {
            "task_id": t.id,
            "opening": self.episode.opening,
            "policy": self.episode.policy,
            "tool_specs": self.tool_specs(),
        }

    def step(self, action: Any) -> tuple[dict[str, Any], bool, float, dict[str, Any]]:
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if self.final is not None:
            return dict(AFTER_DONE), True, 0.0, {"after_done": True}
        name, args = _parse(action)
        result = say_call(self.episode, args) if name == SAY else self.episode.call(name, args)
        info = {"steps": len(self.episode.calls)}
        if not self.episode.done:
            return result, False, 0.0, info
        reward, info = self._finish(info)
        return result, True, reward, info

    def end(self) -> tuple[float, dict[str, Any]]:
        """End the episode now (the agent says it is done); ``(reward, info)``."""
        if self.episode is None:
            raise RuntimeError("call reset() before end()")
        if self.final is not None:
            return self.final
        return self._finish({"steps": len(self.episode.calls)})

    def _finish(self, info: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        assert self.episode is not None and self.task is not None
        trace = self.episode.finish()
        v = verdict(self.world, self.task, trace)
        reward = world_reward(v, self.reward)
        self.final = (reward, {**info, "verdict": v.model_dump(mode="json")})
        return self.final

    @property
    def trace(self) -> WorldTrace | None:
        return None if self.episode is None or self.final is None else self.episode.finish()
