"""The step environment over a world: gold actions earn the verdict's S_adj at the end."""

from __future__ import annotations

import pytest

from groundeval.worlds.env import SAY, WorldEnv


def _gold_actions(world, task):
    yield (SAY, {"text": "What is your order id, email and reason?"})
    for a in task.gold_actions:
        if a.tool in world.manifest.confirm_before:
            yield (SAY, {"text": "Shall I proceed?", "confirm": {"tool": a.tool, "arguments": a.arguments}})
        yield {"function": {"name": a.tool, "arguments": __import__("json").dumps(a.arguments)}}
    yield (SAY, {"text": "Done: " + "; ".join(task.required_outputs) + ". Anything else?", "done": True})


@pytest.mark.parametrize("shaped", [False, True])
def test_gold_actions_earn_full_reward_and_padding_costs_when_shaped(shop, shaped):
    env = WorldEnv(shop, shaped=shaped)
    task = shop.task("ticket-and-refund")
    obs = env.reset("ticket-and-refund")
    assert obs["opening"] == task.user.opening and SAY in {s["function"]["name"] for s in obs["tool_specs"]}
    rewards = []
    for action in _gold_actions(shop, task):
        result, done, reward, info = env.step(action)
        rewards.append(reward)
    assert done and rewards[:-1] == [0.0] * (len(rewards) - 1) and rewards[-1] == 1.0
    assert info["verdict"]["failure_class"] == "completed"
    assert env.step((SAY, {"text": "hello"}))[0]["ok"] is False  # after the end: nothing changes

    env.reset("ticket-and-refund")
    env.step(("get_order", {"order_id": "O-1004"}))
    for _ in range(3):
        env.step(("get_order", {"order_id": "O-1004"}))  # padding
    for action in _gold_actions(shop, task):
        *_, reward, info = env.step(action)
    assert info["verdict"]["reward"] == 1.0
    assert (reward < 1.0) if shaped else (reward == 1.0)


def test_end_without_stop_scores_what_was_done(shop):
    env = WorldEnv(shop)
    env.reset("refund-damaged")
    env.step(("get_order", {"order_id": "O-1001"}))
    reward, info = env.end()
    assert info["verdict"]["failure_class"] == "incomplete" and reward == info["verdict"]["s_adj"] < 1.0
    assert env.end() == (reward, info)


@pytest.mark.parametrize(
    "args",
    [{}, {"text": 3}, None, "not an object", {"text": "All done?", "done": "false"}, {"text": "ok", "done": True}],
)
def test_say_to_user_is_recorded_as_the_adapters_record_it(shop, args):
    # one pseudo-tool, one record whatever the route: a say_to_user without text is an invalid
    # call (was: an empty message said to the user), and only done: true (not "false") ends
    from groundeval.adapters.core import world_call
    from groundeval.worlds.episode import WorldEpisode

    env = WorldEnv(shop)
    env.reset("status-only")
    got, *_ = env.step((SAY, args))
    ep = WorldEpisode(shop, shop.task("status-only"), agent="policy")
    want = world_call(ep, SAY, args)
    assert got == want
    mine, theirs = env.episode.finish(), ep.finish()
    assert mine.calls == theirs.calls and mine.messages == theirs.messages
