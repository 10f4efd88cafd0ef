"""Baseline agents for worlds: the gold agent and five that misbehave in one known way each.

They read the task through ``episode.answer_key`` (they set ``needs_answer_key``), like the
oracle of the tracks; no other agent gets it. Each misbehaving baseline declares when its
misbehaviour applies to a task and the failure class the verdict must then give
(:data:`EXPECTED`), which the tests check on every task of every bundled world.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import UsageError
from .episode import WorldEpisode
from .model import Action, WorldTask
from .simulator import is_yes
from .tools import humanise

__all__ = ["BASELINES", "EXPECTED", "GoldAgent", "applies", "make_agent"]


class GoldAgent:
    """Asks for the facts, asks confirmation before each ``confirm_before`` write, makes the
    gold calls in order, tells the required outputs, and says it is done."""

    name = "gold"
    needs_answer_key = True

    def run(self, episode: WorldEpisode) -> None:
        task = episode.answer_key
        assert task is not None
        self.ask_facts(episode, task)
        if episode.done:
            return
        self.act(episode, task)
        if episode.done:
            return
        self.finish(episode, task)

    # the steps, overridden by the misbehaving baselines
    def ask_facts(self, episode: WorldEpisode, task: WorldTask) -> None:
        keys = list(task.user.facts)
        if keys:
            episode.say("To help you, could you tell me your " + ", ".join(humanise(k) for k in keys) + "?")

    def actions(self, episode: WorldEpisode, task: WorldTask) -> list[Action]:
        return list(task.gold_actions)

    def confirm(self, episode: WorldEpisode, action: Action) -> bool:
        """Ask the user to confirm a write the world says needs it; True when they said yes."""
        if action.tool not in _confirm_before(episode):
            return True
        reply = episode.say(
            f"I can {humanise(action.tool)} with {_args_text(action.arguments)}. Shall I proceed?",
            confirm={"tool": action.tool, "arguments": action.arguments},
        )
        return is_yes(reply)

    def act(self, episode: WorldEpisode, task: WorldTask) -> None:
        for action in self.actions(episode, task):
            if episode.done:
                return
            if _is_write(episode, action.tool) and not self.confirm(episode, action):
                continue
            self.call(episode, action)

    def call(self, episode: WorldEpisode, action: Action) -> dict[str, Any]:
        return episode.call(action.tool, action.arguments)

    def finish(self, episode: WorldEpisode, task: WorldTask) -> None:
        said = (
            ("Here is where things stand: " + "; ".join(task.required_outputs) + ". ") if task.required_outputs else ""
        )
        episode.say(said + "Is there anything else I can help with?", done=True)


def _confirm_before(episode: WorldEpisode) -> list[str]:
    return episode._world.manifest.confirm_before


def _is_write(episode: WorldEpisode, tool: str) -> bool:
    spec = episode._world.manifest.tools.get(tool)
    return spec is not None and spec.kind == "write"


def _args_text(args: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(args.items())) or "no arguments"


class SkipConfirmAgent(GoldAgent):
    """Makes the gold calls without asking the user to confirm anything."""

    name = "skip-confirm"

    def confirm(self, episode: WorldEpisode, action: Action) -> bool:
        return True


class WrongArgAgent(GoldAgent):
    """Changes one argument of the first gold write (another enum value, a number + 1, a
    flipped boolean, or a different string)."""

    name = "wrong-arg"

    def actions(self, episode: WorldEpisode, task: WorldTask) -> list[Action]:
        out = list(task.gold_actions)
        for i, a in enumerate(out):
            if _is_write(episode, a.tool):
                out[i] = Action(tool=a.tool, arguments=mutate(episode._world.manifest.tools[a.tool], a.arguments))
                break
        return out


def mutate(tool: Any, args: dict[str, Any]) -> dict[str, Any]:
    """One argument changed, deterministically: an enum's next value first, then a number,
    a boolean, the last string."""
    new = dict(args)
    names = sorted(args)
    for n in names:
        spec = tool.arguments.get(n)
        if spec is not None and spec.enum and len(spec.enum) > 1 and args[n] in spec.enum:
            new[n] = spec.enum[(spec.enum.index(args[n]) + 1) % len(spec.enum)]
            return new
    for n in names:
        v = args[n]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            new[n] = v + 1
            return new
        if isinstance(v, bool):
            new[n] = not v
            return new
    for n in reversed(names):
        if isinstance(args[n], str):
            new[n] = args[n] + "-X"
            return new
    return new


class ForbiddenAgent(GoldAgent):
    """First calls a tool the world or the task forbids (arguments taken from the gold calls
    where names match), then behaves like the gold agent."""

    name = "forbidden"

    def act(self, episode: WorldEpisode, task: WorldTask) -> None:
        tool = forbidden_tool(episode._world, task)
        if tool is not None:
            episode.call(tool, placeholder_args(episode._world.manifest.tools[tool], task))
        super().act(episode, task)


def forbidden_tool(world: Any, task: WorldTask) -> str | None:
    names = sorted(set(world.manifest.rules.forbidden_tools) | set(task.forbidden_tools))
    return names[0] if names else None


def placeholder_args(tool: Any, task: WorldTask) -> dict[str, Any]:
    known: dict[str, Any] = {}
    for a in task.gold_actions:
        for k, v in a.arguments.items():
            known.setdefault(k, v)
    for k, v in task.user.facts.items():
        known.setdefault(k, v)
    out = {}
    for name, spec in sorted(tool.arguments.items()):
        if not spec.required:
            continue
        if name in known:
            out[name] = known[name]
        elif spec.enum:
            out[name] = spec.enum[0]
        else:
            out[name] = {"string": "x", "integer": 1, "number": 1, "boolean": True, "object": {}, "array": []}[
                spec.type
            ]
    return out


class EarlyStopAgent(GoldAgent):
    """Asks for the facts, makes the gold reads, then says it is done before any write."""

    name = "early-stop"

    def actions(self, episode: WorldEpisode, task: WorldTask) -> list[Action]:
        out = []
        for a in task.gold_actions:
            if _is_write(episode, a.tool):
                break
            out.append(a)
        return out

    def finish(self, episode: WorldEpisode, task: WorldTask) -> None:
        episode.say("I have looked into it. Is there anything else I can help with?", done=True)


class PaddingAgent(GoldAgent):
    """The gold agent, repeating every successful read twice more (redundant calls)."""

    name = "padding"

    def call(self, episode: WorldEpisode, action: Action) -> dict[str, Any]:
        out = episode.call(action.tool, action.arguments)
        if out["ok"] and not _is_write(episode, action.tool):
            for _ in range(2):
                episode.call(action.tool, action.arguments)
        return out


BASELINES: dict[str, Callable[[], GoldAgent]] = {
    "gold": GoldAgent,
    "skip-confirm": SkipConfirmAgent,
    "wrong-arg": WrongArgAgent,
    "forbidden": ForbiddenAgent,
    "early-stop": EarlyStopAgent,
    "padding": PaddingAgent,
}


def _has_write(world: Any, task: WorldTask) -> bool:
    return any(world.manifest.tools[a.tool].kind == "write" for a in task.gold_actions)


def applies(agent: str, world: Any, task: WorldTask) -> bool:
    """Whether baseline ``agent``'s misbehaviour shows on ``task``."""
    if agent == "gold":
        return True
    if agent == "skip-confirm":
        return any(a.tool in world.manifest.confirm_before for a in task.gold_actions)
    if agent in ("wrong-arg", "early-stop"):
        return _has_write(world, task)
    if agent == "forbidden":
        return forbidden_tool(world, task) is not None
    if agent == "padding":
        return any(world.manifest.tools[a.tool].kind == "read" for a in task.gold_actions)
    return False


EXPECTED: dict[str, tuple[str, ...]] = {
    "gold": ("completed",),
    "skip-confirm": ("policy_breach",),
    "wrong-arg": ("wrong_end_state",),
    "forbidden": ("policy_breach", "forbidden_side_effect"),
    "early-stop": ("incomplete",),
    "padding": ("completed",),
}
"""The failure class (one of) each baseline gets on a task where it :func:`applies`."""


def make_agent(name: str, *, base_url: str | None = None, api_key_env: str | None = None, **llm: Any) -> Any:
    """A baseline by name, ``openai:<model>`` (an OpenAI-compatible server at ``base_url``), or
    ``module:factory`` returning an agent with ``run(episode)``. ``llm``: the model agent's
    ``temperature``, ``max_tokens``, ``retries``, ``timeout`` and ``cache`` (None: its default)."""
    if name in BASELINES:
        return BASELINES[name]()
    if name.startswith("openai:"):
        from .llm import LLMWorldAgent

        url = base_url or "https://api.openai.com/v1"
        given = {k: v for k, v in llm.items() if v is not None}
        return LLMWorldAgent(name.split(":", 1)[1], url, api_key_env=api_key_env or "OPENAI_API_KEY", **given)
    if ":" in name:  # the user's module:factory, loaded and called as a pack's agent is
        from ..agents.registry import create, load_target

        return create(load_target(name, name), name)
    raise UsageError.single(
        "--agent", f"unknown world agent {name!r} (baselines: {', '.join(BASELINES)}; or module:factory)"
    )
