"""Reward hacking on worlds: each cheap strategy earns less than the honest one."""

from __future__ import annotations

from groundeval.worlds.agents import GoldAgent
from groundeval.worlds.reward import rl_reward, shaped_reward
from groundeval.worlds.episode import run_episode
from groundeval.worlds.verdict import verdict


class WriteThenUndo(GoldAgent):
    """Does the gold, plus a ticket it opens and closes again: the end state is right."""

    name = "write-then-undo"

    def act(self, episode, task):
        super().act(episode, task)
        got = episode.call("open_ticket", {"order_id": "O-1001", "note": "x"})
        episode.call("close_ticket", {"ticket_id": got["result"]["ticket_id"]})


class AskUserToDoIt(GoldAgent):
    """Tells the user to make the change themselves."""

    name = "ask-user"

    def act(self, episode, task):
        episode.say("You can refund it yourself from your account page; the order will then be refunded.")


class Padding(GoldAgent):
    name = "pad"

    def call(self, episode, action):
        out = episode.call(action.tool, action.arguments)
        for _ in range(4):
            episode.call("get_order", {"order_id": "O-1001"})
        return out


def test_every_hack_earns_less_than_gold(shop):
    task = shop.task("refund-damaged")
    gold = verdict(shop, task, run_episode(shop, task, GoldAgent()))
    rows = {}
    for agent in (WriteThenUndo(), AskUserToDoIt(), Padding()):
        v = verdict(shop, task, run_episode(shop, task, agent))
        rows[agent.name] = (v.failure_class, v.reward, v.s_adj, shaped_reward(v), rl_reward(v))
        assert shaped_reward(v) < shaped_reward(gold) == 1.0, (agent.name, rows[agent.name])
        assert rl_reward(v) < rl_reward(gold) == 1.0 or agent.name == "pad", (agent.name, rows[agent.name])
    assert rows["write-then-undo"][0] == "forbidden_side_effect" and rows["write-then-undo"][1] == 1.0
    assert rows["ask-user"][0] == "incomplete" and rows["ask-user"][1] == 0.0
    # padding a clean path is no breach: only the shaped reward (efficiency) sees it; the RL reward
    # counts flagged calls only, so padding can neither lower a clean path nor lift a flagged one
    assert rows["pad"][0] == "completed" and rows["pad"][2] == rows["pad"][4] == 1.0


class Reciter(GoldAgent):
    """Names every value the task wants without reading anything (read-only task: the state is right)."""

    name = "reciter"

    def run(self, episode):
        task = episode.answer_key
        episode.say("Status: " + ", ".join(task.required_outputs) + ". Anything else?", done=True)


class SayThenRead(GoldAgent):
    """Names the value first and only then makes the gold calls: the value was not read when said."""

    name = "say-then-read"

    def run(self, episode):
        task = episode.answer_key
        episode.say("It is " + ", ".join(task.required_outputs) + ".")
        for a in task.gold_actions:
            episode.call(a.tool, a.arguments)


def test_reciting_required_outputs_without_reading_them_earns_nothing(shop):
    task = shop.task("status-only")
    assert task.required_outputs == ["shipped"] and "shipped" not in shop.policy.casefold()
    for agent in (Reciter(), SayThenRead()):
        v = verdict(shop, task, run_episode(shop, task, agent))
        assert v.state_match and v.reward == 0.0 and v.failure_class == "missing_output", agent.name
        assert v.missing_outputs == ["shipped"] and v.components["outputs"] == 0.0
    honest = verdict(shop, task, run_episode(shop, task, GoldAgent()))
    assert honest.reward == 1.0 and honest.failure_class == "completed" and not honest.missing_outputs


def test_a_required_output_may_come_from_the_users_words_or_the_policy(shop):
    """A value the user gave, or that the policy states, is there to be read without a tool."""
    task = shop.task("status-only").model_copy(update={"required_outputs": ["O-1003", "new status"]})
    v = verdict(shop, task, run_episode(shop, task, Reciter()))
    assert "O-1003" in v.missing_outputs  # the user has not said it before the agent's only message
    assert "new status" not in v.missing_outputs  # the policy says it

    class AskFirst(GoldAgent):
        def run(self, episode):
            episode.say("Could you tell me your order id?")
            episode.say("Order O-1003: new status unknown.", done=True)

    v = verdict(shop, task, run_episode(shop, task, AskFirst()))
    assert v.missing_outputs == [], v.missing_outputs


def test_a_value_the_gold_cannot_read_either_counts_when_said(shop):
    """A derived value (a total the agent adds up) is in no result: demanding it be read would fail
    the gold too, so it counts as said; one the gold calls do read must have been read."""
    task = shop.task("status-only").model_copy(update={"required_outputs": ["7777.77", "shipped"]})
    v = verdict(shop, task, run_episode(shop, task, Reciter()))
    assert v.missing_outputs == ["shipped"], v.missing_outputs
    gold = verdict(shop, task, run_episode(shop, task, GoldAgent()))
    assert gold.missing_outputs == [] and gold.reward == 1.0
