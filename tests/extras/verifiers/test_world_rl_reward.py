"""The RL reward of worlds (``groundeval.rl.world_reward``), which the world ``verifiers``
environment optimises: pure, no ``verifiers`` needed (runs in the main venv too). Padding a path
with calls that break nothing never raises it (where it raises ``S_adj``); 0 wherever τ²'s reward
is 0; the verdict's ``S_adj`` on a rewarded path with no flagged call; and the trace the tool
server keeps current (``WorldEpisode.snapshot``) is the one ``finish`` gives."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.rl.world_reward import world_metrics, world_rl_reward
from groundeval.worlds.agents import BASELINES, EXPECTED, SkipConfirmAgent, applies
from groundeval.worlds.episode import WorldEpisode, run_episode
from groundeval.worlds.model import FAILURE_CLASSES
from groundeval.worlds.verdict import verdict


def test_every_baseline_on_every_task_earns_the_formula_and_classes_match(shop):
    for name, factory in sorted(BASELINES.items()):
        for task in shop.tasks:
            v = verdict(shop, task, run_episode(shop, task, factory()))
            rl = world_rl_reward(v)
            assert rl == round(v.reward * v.score / (1 + v.n_flagged) ** 2, 6), (name, task.id)
            if v.reward == 0.0:
                assert rl == 0.0
            if v.n_flagged == 0:
                assert rl == v.reward * v.s_adj
            if v.n_calls > v.n_flagged:
                assert rl <= v.s_adj
            metrics = world_metrics(v)
            assert sum(metrics[f"class.{c}"] for c in FAILURE_CLASSES) == 1.0
            assert metrics[f"class.{v.failure_class}"] == 1.0 and metrics["reward"] == v.reward
            if applies(name, shop, task):
                assert v.failure_class in EXPECTED[name], (name, task.id, v.failure_class)
                if name == "gold":
                    assert rl == 1.0
                if name in ("wrong-arg", "early-stop"):
                    assert rl == 0.0, (name, task.id)
                if name == "skip-confirm":  # the state is right (tau2: 1), the write unconfirmed
                    assert v.reward == 1.0 and 0.0 < rl < 1.0, task.id


_READS = st.sampled_from(
    [
        ("get_order", {"order_id": "O-1001"}),
        ("get_order", {"order_id": "O-1002"}),
        ("get_order", {"order_id": "O-1003"}),
        ("list_orders", {"customer_id": "C-1"}),
        ("list_orders", {"customer_id": "C-2"}),
        ("find_customer", {"email": "ben@example.com"}),
    ]
)


def _said(turns: list[tuple[str, object]]) -> int:
    return sum(1 for kind, _ in turns if kind == "say")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pads=st.lists(st.tuples(st.integers(0, 10), _READS), min_size=1, max_size=8))
def test_property_padding_a_flagged_path_never_raises_the_rl_reward(shop, pads):
    """The skip-confirm path (one flagged write) with harmless reads inserted anywhere: the RL
    reward stays put while S_adj rises with every read (v = flagged / calls shrinks)."""
    task = shop.task("refund-damaged")
    base = run_episode(shop, task, SkipConfirmAgent())
    turns: list[tuple[str, object]] = []  # its calls and messages in the order they were made
    for m in (m for m in base.messages if m.role == "assistant"):
        turns.extend(("call", (c.tool, c.arguments)) for c in base.calls[len(turns) - _said(turns) : m.step])
        turns.append(("say", m))
    for at, read in pads:  # anywhere before the last message (the user leaves after it)
        turns.insert(min(at, len(turns) - 1), ("call", read))
    ep = WorldEpisode(shop, task, agent="padded")
    for kind, item in turns:
        if kind == "say":
            ep.say(item.text, confirm=item.confirm, done=item.done)
        else:
            ep.call(*item)
    padded = verdict(shop, task, ep.finish())
    plain = verdict(shop, task, base)
    assert plain.n_flagged == padded.n_flagged == 1 and padded.reward == plain.reward == 1.0
    assert world_rl_reward(padded) == world_rl_reward(plain) == 0.25
    assert padded.s_adj > plain.s_adj


def test_the_snapshot_is_the_trace_finish_gives(shop):
    for name, factory in sorted(BASELINES.items()):
        for task in shop.tasks:
            ep = WorldEpisode(shop, task, agent=name, reveal_task=True)
            factory().run(ep)
            early = ep.snapshot()
            assert ep.snapshot() == early
            assert ep.finish() == early, (name, task.id)
