"""What the world ``verifiers`` tests share: a scripted policy that also talks (plain replies),
full rollouts of the world environment against it, a baseline's Python API trace as such a
script, and the Python API route (a :class:`WorldEpisode` driven with the same calls and messages).

Import it only after ``pytest.importorskip("verifiers.v1")``: :func:`rollouts` needs verifiers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from verifiers_rollout import ScriptedModel, as_value

from groundeval.worlds.episode import WorldEpisode

SHOP = Path(__file__).resolve().parents[2] / "worlds" / "shop"
SAY = "say_to_user"


class TalkingModel(ScriptedModel):
    """A script of turns: a ``(name, arguments)`` pair is one tool call (arguments as JSON text,
    or the string itself), a string a plain reply with that content; after the script, an empty
    reply (the policy has nothing more to say)."""

    def reply(self, turn: int) -> dict:
        item = self.calls[turn] if turn < len(self.calls) else ""
        if not isinstance(item, str):
            return super().reply(turn)
        return {
            "id": f"cmpl-{turn}",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": item}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


def environment(world: str | Path = SHOP, **taskset: Any) -> Any:
    import verifiers.v1 as vf

    from groundeval.rl.verifiers_worlds import PLUGIN_ID

    cfg = vf.SingleAgentEnvConfig.model_validate(
        {
            "taskset": {"id": PLUGIN_ID, "world": str(world), **taskset},
            "agent": {"harness": {"id": PLUGIN_ID}, "runtime": {"type": "subprocess"}},
        }
    )
    return vf.load_environment(cfg)


def rollouts(
    world: str | Path, runs: list[tuple[str, list[Any]]], monkeypatch: Any, **taskset: Any
) -> list[tuple[Any, TalkingModel]]:
    """Full rollouts, one after the other in one serving environment (``taskset``: more of its
    config): ``(task id, turns)`` each against its own scripted model; ``(episode, model)`` each."""
    import verifiers.v1 as vf

    monkeypatch.setenv("SCRIPTED_KEY", "test-key")
    env = environment(world, **taskset)
    by_id = {t.data.task_id: t for t in env.taskset}
    models = [TalkingModel(turns) for _, turns in runs]

    async def go() -> list[Any]:
        out = []
        async with env.serving():
            for (task_id, _), model in zip(runs, models):
                client = vf.EvalClientConfig(base_url=model.url, api_key_var="SCRIPTED_KEY")
                out.append(await env.run_episode(by_id[task_id], vf.ModelContext(model="scripted", client=client)))
        return out

    try:
        episodes = asyncio.run(go())
    finally:
        for model in models:
            model.close()
    return list(zip(episodes, models))


def script_of(trace: Any, *, plain: bool = True) -> list[Any]:
    """A Python API trace as the model's turns: its calls and its messages in the order they were
    made; a message with neither ``confirm`` nor ``done`` as a plain reply when ``plain``, any
    other as a ``say_to_user`` call."""
    turns: list[Any] = []
    made = 0
    for m in trace.messages:
        if m.role != "assistant":
            continue
        turns.extend((c.tool, c.arguments) for c in trace.calls[made : m.step])
        made = max(made, m.step)
        if plain and m.confirm is None and not m.done:
            turns.append(m.text)
            continue
        args: dict[str, Any] = {"text": m.text}
        if m.confirm is not None:
            args["confirm"] = m.confirm.model_dump(exclude_none=True)
        if m.done:
            args["done"] = True
        turns.append((SAY, args))
    turns.extend((c.tool, c.arguments) for c in trace.calls[made:])
    return turns


def direct(world: Any, task_id: str, turns: list[Any], simulator: Any = None) -> Any:
    """The Python API route: the same turns on a :class:`WorldEpisode` — a plain reply is
    ``say(text)``, a ``say_to_user`` call with a text ``say(text, confirm, done)``, anything else
    ``call(name, value)`` (``say_to_user`` without a text too: a tool the world does not have) —
    until the episode is over; its finished trace."""
    ep = WorldEpisode(world, world.task(task_id), simulator=simulator, agent="verifiers")
    for turn in turns:
        if ep.done:
            break
        if isinstance(turn, str):
            if not turn.strip():
                break
            ep.say(turn.strip())
            continue
        name, sent = turn
        value = as_value(sent)
        if name == SAY and isinstance(value, dict) and isinstance(value.get("text"), str):
            ep.say(value["text"], confirm=value.get("confirm"), done=value.get("done") is True)
        else:
            ep.call(name, value)
    return ep.finish()
