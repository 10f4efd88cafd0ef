"""The world ``verifiers`` environment (``groundeval.rl.verifiers_worlds``): full rollouts — a real
local OpenAI-compatible HTTP server playing a scripted policy that calls tools and talks (tool
calls, ``say_to_user`` and plain replies), verifiers' interception endpoint, the world tool server
subprocess with the deterministic simulated user, verifiers' scoring — whose traces equal the
Python API route's (a ``WorldEpisode`` driven with the same calls and messages) and whose reward
and metrics are what ``groundeval worlds score`` gives the written traces; and the tool server
alone behind a real MCP client, recording any call as the Python API records it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

vf = pytest.importorskip(
    "verifiers.v1",
    reason="verifiers is not installed: bash .ci/extras/verifiers.sh (a venv "
    "of its own: verifiers 0.4 pins mcp==2.0.0, groundeval's mcp/dev extras need mcp>=2.3)",
)

from worlds_rollout import SAY, SHOP, TalkingModel, direct, environment, rollouts, script_of  # noqa: E402 - after the skip

from groundeval.rl.world_reward import world_metrics, world_rl_reward  # noqa: E402
from groundeval.worlds.agents import GoldAgent, SkipConfirmAgent, WrongArgAgent  # noqa: E402
from groundeval.worlds.episode import run_episode  # noqa: E402
from groundeval.worlds.model import WorldTrace  # noqa: E402
from groundeval.worlds.verdict import verdict  # noqa: E402

# the model's mistakes, made before the gold path of a read-only task
BAD_CALLS: list[tuple[str, Any]] = [
    ("lookup_warehouse", {"item": "toaster"}),  # a tool the world does not have
    ("get_order", '{"order_id": "O-10'),  # arguments text cut off: no JSON
    ("get_order", {"order_id": 1003}),  # the wrong type
    ("get_order", '["O-1003"]'),  # JSON, but no object
    (SAY, {"message": "hello"}),  # say_to_user without a text
]


@pytest.fixture(scope="module")
def rolled(shop):
    """Four full rollouts: the gold policy (asking for the facts in a plain reply), skip-confirm,
    wrong-arg, and the model's mistakes before the gold path: ``{name: (task id, turns, episode,
    model)}``."""
    runs = {
        "gold": ("refund-damaged", GoldAgent()),
        "skip-confirm": ("cancel-pending", SkipConfirmAgent()),
        "wrong-arg": ("ticket-and-refund", WrongArgAgent()),
        "bad-calls": ("status-only", GoldAgent()),
    }
    scripts = {}
    for name, (task_id, agent) in runs.items():
        turns = script_of(run_episode(shop, shop.task(task_id), agent))
        scripts[name] = (task_id, [*BAD_CALLS, *turns] if name == "bad-calls" else turns)
    with pytest.MonkeyPatch.context() as mp:
        done = rollouts(SHOP, list(scripts.values()), mp)
    return {name: (*scripts[name], *done[i]) for i, name in enumerate(scripts)}


def _recorded(episode: Any) -> WorldTrace:
    (trace,) = episode.traces
    return WorldTrace.model_validate(trace.state.ge_world_trace)


@pytest.mark.slow  # four full rollouts (a tool server subprocess each: ~10 s to import verifiers there)
def test_each_rollout_records_the_python_api_trace(shop, rolled):
    for name, (task_id, turns, episode, model) in rolled.items():
        assert not episode.errors, (name, episode.errors)
        served = _recorded(episode)
        assert served.model_dump() == direct(shop, task_id, turns).model_dump(), name
        assert served.ended_by == "user_stop", name  # the policy said it was done; the user left
        assert len(model.requests) == len(turns), name  # one model reply per turn, none after the stop
    # what the model was told: the policy, the user's opening, the world's tools and say_to_user
    _task_id, _turns, _episode, model = rolled["gold"]
    first = model.requests[0]
    assert shop.policy in first["messages"][0]["content"] and first["messages"][0]["role"] == "system"
    assert first["messages"][1] == {"role": "user", "content": shop.task("refund-damaged").user.opening}
    assert [t["function"]["name"] for t in first["tools"]] == [*sorted(shop.manifest.tools), SAY]
    # the plain reply was said to the user, whose answer came back as the next user message
    served = _recorded(rolled["gold"][2])
    assert served.messages[1].role == "assistant" and served.messages[1].text == rolled["gold"][1][0]
    assert model.requests[1]["messages"][-1] == {"role": "user", "content": served.messages[2].text}
    assert "order_id: O-1001" in served.messages[2].text


@pytest.mark.slow
def test_unknown_tools_and_bad_arguments_are_recorded_as_the_python_api_records_them(rolled):
    _task_id, turns, episode, _model = rolled["bad-calls"]
    served = _recorded(episode)
    assert [(c.tool, c.status) for c in served.calls[: len(BAD_CALLS)]] == [(n, "invalid") for n, _ in BAD_CALLS]
    assert served.calls[1].arguments == {"_": BAD_CALLS[1][1]}  # the text as it was sent
    assert served.calls[2].arguments == {"order_id": 1003}
    assert served.calls[3].arguments == {"_": ["O-1003"]}
    assert [c.flags[0].cls for c in served.calls[: len(BAD_CALLS)]] == [
        "unknown_tool",
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
        "unknown_tool",
    ]
    (trace,) = episode.traces
    assert trace.metrics["n_flagged"] == len(BAD_CALLS) and trace.metrics["reward"] == 1.0
    assert trace.rewards["rl_reward"].score == round(1.0 / (1 + len(BAD_CALLS)) ** 2, 6)


@pytest.mark.slow
def test_rewards_and_metrics_are_what_groundeval_worlds_score_gives_the_written_traces(shop, rolled, tmp_path):
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(_recorded(e).model_dump_json() + "\n" for _t, _s, e, _m in rolled.values()))
    cli = [sys.executable, "-m", "groundeval.cli.main", "worlds", "score", str(SHOP), str(traces)]
    subprocess.run([*cli, "--out", str(tmp_path / "scored")], check=True, capture_output=True)
    scored = {v["task_id"]: v for v in map(json.loads, (tmp_path / "scored" / "verdicts.jsonl").open())}
    expected = {"gold": "completed", "skip-confirm": "policy_breach", "wrong-arg": "wrong_end_state"}
    for name, (task_id, _turns, episode, _model) in rolled.items():
        (trace,) = episode.traces
        v = verdict(shop, shop.task(task_id), _recorded(episode))
        assert v.model_dump(mode="json") == scored[task_id], name
        assert trace.metrics == world_metrics(v), name
        assert list(trace.rewards) == ["rl_reward"] and trace.rewards["rl_reward"].weight == 1.0
        assert trace.rewards["rl_reward"].score == world_rl_reward(v) == trace.reward, name
        assert trace.metrics[f"class.{scored[task_id]['failure_class']}"] == 1.0
        if name in expected:
            assert scored[task_id]["failure_class"] == expected[name], name
    by = {name: rolled[name][2].traces[0] for name in rolled}
    assert by["gold"].reward == 1.0 and by["wrong-arg"].reward == 0.0
    # the unconfirmed write leaves the right state (tau2's reward 1), its flag costs the RL reward
    assert by["skip-confirm"].metrics["reward"] == 1.0 and by["skip-confirm"].reward == 0.25


@pytest.mark.slow  # one full rollout (~10 s)
def test_a_model_can_play_the_user(shop, monkeypatch):
    """``simulator="llm:<model>"``: the tool server's user is a model on another local server (its
    replies scripted too); the trace is the one a WorldEpisode with the same LLM user records."""
    from groundeval.worlds.llm import LLMUser

    policy = [
        "Could you tell me your order id?",
        ("get_order", {"order_id": "O-1003"}),
        (SAY, {"text": "Order O-1003 is shipped. Anything else?", "done": True}),
    ]
    user_says = ["order_id: O-1003", "###STOP###"]
    users = [TalkingModel(user_says), TalkingModel(user_says)]  # the rollout's user, the Python API route's
    try:
        ((episode, model),) = rollouts(
            SHOP, [("status-only", policy)], monkeypatch, simulator="llm:user-model", user_base_url=users[0].url
        )
        api = direct(shop, "status-only", policy, simulator=LLMUser("user-model", users[1].url))
    finally:
        for u in users:
            u.close()
    assert not episode.errors, episode.errors
    served = _recorded(episode)
    assert served.simulator == "llm:user-model" and len(users[0].requests) == 2
    assert [m.text for m in served.messages if m.role == "user"][1:] == user_says
    assert served.model_dump() == api.model_dump()
    assert episode.traces[0].reward == 1.0 and served.ended_by == "user_stop" and len(model.requests) == 3


def test_a_simulator_the_taskset_does_not_know_is_a_located_usage_error():
    from groundeval.errors import UsageError

    with pytest.raises(UsageError, match="taskset.simulator"):
        list(environment(SHOP, simulator="oracle").taskset)


def _data(task_id: str) -> Any:
    from groundeval.rl.verifiers_worlds import WorldData

    return WorldData(id=task_id, name=task_id, prompt="", world=str(SHOP), task_id=task_id)


async def _serve(task_id: str, calls: list[tuple[str, Any]]) -> tuple[Any, list[str], list[Any]]:
    """The tool server of one task behind a real in-memory MCP client: (toolset, listed, results);
    a string's arguments go as the raw text in ``_meta``, as the bundled harness sends them."""
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    from groundeval.rl.verifiers_common import ARGUMENTS_META
    from groundeval.rl.verifiers_worlds import WorldToolset, WorldToolsetConfig

    toolset = WorldToolset(WorldToolsetConfig())
    await toolset.setup_task(_data(task_id))
    server = MCPServer("groundeval-world")
    toolset.register(server)
    results = []
    async with Client(server) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        for name, sent in calls:
            if isinstance(sent, dict):
                results.append(await client.call_tool(name, sent))
            else:
                results.append(await client.call_tool(name, {}, meta={ARGUMENTS_META: sent}))
    return toolset, listed, results


def test_the_tool_server_lists_the_world_and_records_any_call_a_client_sends(shop):
    calls = [
        *BAD_CALLS,
        ("get_order", {"order_id": "O-1003", "extra": True}),
        ("get_order", json.dumps('{"order_id": "O-1003"}')),  # a JSON string holding JSON text: a string
        ("get_order", '""'),
        (SAY, {"text": "Order O-1003?"}),
    ]
    toolset, listed, results = asyncio.run(_serve("status-only", calls))
    assert listed == [*sorted(shop.manifest.tools), SAY]
    assert [r.is_error for r in results] == [True] * (len(calls) - 1) + [False]
    assert [r.meta["groundeval/done"] for r in results] == [False] * len(calls)
    served = toolset.episode.finish()
    assert served.model_dump() == direct(shop, "status-only", calls).model_dump()


_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12)  # JSON-RPC carries no lone surrogate
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_NAMES = st.sampled_from(["get_order", "refund_order", "list_orders", SAY, "lookup_warehouse"]) | _TEXT
_ARGUMENTS = st.dictionaries(st.sampled_from(["order_id", "reason", "customer_id", "text", "done"]) | _TEXT, _JSON)
_CALLS = st.lists(st.tuples(_NAMES, _ARGUMENTS | _TEXT | _JSON.map(json.dumps)), min_size=1, max_size=5)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=_CALLS)
@example(calls=[("get_order", '""')])  # parsed twice, this became no arguments
def test_property_any_call_over_mcp_is_recorded_as_the_python_api_records_it(shop, calls):
    """Random names (the world's, say_to_user, unknown, any text) with random arguments objects or
    raw texts: the tool server's trace is the Python API route's, messages included."""
    toolset, _listed, results = asyncio.run(_serve("refund-damaged", calls))
    served = toolset.episode.finish()
    assert served.model_dump() == direct(shop, "refund-damaged", calls).model_dump()
    assert results[-1].meta["groundeval/done"] == (served.ended_by != "agent_done")


def test_the_step_budget_ends_the_episode_and_the_reply_says_so(shop):
    task = shop.task("status-only")
    budget = task.max_steps or shop.manifest.max_steps
    calls = [("get_order", {"order_id": "O-1003"})] * (budget + 2)
    toolset, _listed, results = asyncio.run(_serve("status-only", calls))
    assert [r.meta["groundeval/done"] for r in results] == [False] * budget + [True, True]
    served = toolset.episode.finish()
    assert served.ended_by == "max_steps" and len(served.calls) == budget
    assert served.model_dump() == direct(shop, "status-only", calls).model_dump()
