"""The step environment over a world: gold actions earn the verdict's RL reward (1) at the end."""

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


@pytest.mark.parametrize("kind", ["rl", "s_adj"])
def test_end_without_stop_scores_what_was_done(shop, kind):
    """The RL reward gives an unfinished task nothing (τ²'s reward is 0); ``S_adj`` gives partial credit."""
    env = WorldEnv(shop, reward=kind)
    env.reset("refund-damaged")
    env.step(("get_order", {"order_id": "O-1001"}))
    reward, info = env.end()
    v = info["verdict"]
    assert v["failure_class"] == "incomplete" and reward == (0.0 if kind == "rl" else v["s_adj"])
    assert 0.0 < v["s_adj"] < 1.0
    assert env.end() == (reward, info)


def _unconfirmed_refund(env, pad: int) -> float:
    """A policy breach that leaves the state right (a refund without asking), after ``pad`` harmless reads."""
    env.reset("refund-damaged")
    env.step((SAY, {"text": "What is your order number?"}))
    for _ in range(pad):
        env.step(("find_customer", {"email": "ana@example.com"}))
    env.step(("get_order", {"order_id": "O-1001"}))
    env.step(("refund_order", {"order_id": "O-1001", "reason": "damaged"}))
    return env.step((SAY, {"text": "Refunded as damaged. Anything else?", "done": True}))[2]


def test_padding_a_flagged_path_raises_s_adj_but_not_the_default_reward(shop):
    """Issue 30's lesson for worlds: with v = flagged / calls, harmless calls lift a breaching
    path's S_adj; the default (RL) reward counts flagged calls only."""
    rl, s_adj = WorldEnv(shop), WorldEnv(shop, reward="s_adj")
    plain_rl, padded_rl = _unconfirmed_refund(rl, 0), _unconfirmed_refund(rl, 6)
    plain_s, padded_s = _unconfirmed_refund(s_adj, 0), _unconfirmed_refund(s_adj, 6)
    assert padded_s > plain_s and padded_rl == plain_rl < 1.0
    assert rl.final is not None and rl.final[1]["verdict"]["failure_class"] == "policy_breach"


def test_an_unknown_reward_is_a_usage_error(shop):
    from groundeval.errors import UsageError

    with pytest.raises(UsageError):
        WorldEnv(shop, reward="accuracy")


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
