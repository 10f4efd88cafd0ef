"""The step-style Env: observations with tool specs, every call through the gated runtime,
the reward at the end equal to the scorer's S_adj on the recorded trace, deterministic."""

from __future__ import annotations

import json

import pytest

from groundeval.agents.oracle import OracleAgent
from groundeval.agents.runner import run_episode
from groundeval.rl.env import Env, parse_tool_call
from groundeval.scoring.score import score


def oracle_calls(store, q):
    """The oracle's own calls on ``q`` (tool name, arguments), replayed through the Env below."""
    trace = run_episode(store, q, OracleAgent())
    return [(c.tool, c.arguments) for c in trace.calls], trace


def strip_timings(trace):
    data = trace.model_dump(mode="json")
    data.pop("timings")
    return data


def test_reset_gives_the_public_view_and_tool_specs(tiny):
    store, qs = tiny
    env = Env(store, qs)
    obs = env.reset(0)
    q = qs.questions[0]
    assert obs["question"]["text"] == q.text and obs["question"]["answer_schema"] == q.answer_schema
    assert "ground_truth" not in json.dumps(obs) and "expected_search_space" not in json.dumps(obs)
    names = [s["function"]["name"] for s in obs["tool_specs"]]
    assert names == ["search_artifacts", "fetch_artifact", "submit_answer"]
    submit = obs["tool_specs"][2]["function"]["parameters"]["properties"]["answer"]
    assert submit == q.answer_schema
    assert env.reset(q.id)["question"]["question_id"] == q.id


def test_replayed_oracle_gets_the_scorers_reward_at_done(tiny):
    store, qs = tiny
    config = store.manifest.evaluation.scoring
    env = Env(store, qs)
    for i, q in enumerate(qs.questions):
        calls, reference = oracle_calls(store, q)
        env.reset(i, agent="oracle")
        rewards = []
        for n, (tool, args) in enumerate(calls):
            result, done, r, info = env.step({"name": tool, "arguments": args})
            rewards.append(r)
            assert done == (n == len(calls) - 1)
        assert rewards[:-1] == [0.0] * (len(calls) - 1)
        s = score(q, env.trace, config)
        assert rewards[-1] == s.s_adj == score(q, reference, config).s_adj == 1.0
        assert info["score"]["s_adj"] == s.s_adj and info["trace_status"] == "completed"
        assert strip_timings(env.trace) == strip_timings(reference)


def test_bad_calls_are_recorded_not_raised(tiny):
    store, qs = tiny
    env = Env(store, qs)
    env.reset(0)
    for call in (
        {"name": "rm_rf", "arguments": {}},
        {"function": {"name": "fetch_artifact", "arguments": "{nope"}},
        ("fetch_artifact", {"artifact_id": "DOES-NOT-EXIST"}),
        42,
        {"name": "submit_answer", "arguments": {"answer": {"bogus": 1}}},
    ):
        result, done, r, _ = env.step(call)
        assert not done and r == 0.0 and result["status"] in ("invalid", "not_found")
    statuses = [c.status for c in env.trace.calls]
    assert statuses == ["invalid", "invalid", "not_found", "invalid", "invalid"]
    reward, info = env.end()
    assert reward == score(qs.questions[0], env.trace, store.manifest.evaluation.scoring).s_adj
    assert env.trace.status == "abandoned" and "hallucinated_id" in info["score"]["failures"]
    after = env.step(("search_artifacts", {"query": "x"}))
    assert after[1:3] == (True, 0.0) and after[3] == {"after_done": True}
    assert len(env.trace.calls) == 5  # nothing recorded after the end


def test_step_budget_ends_the_episode_with_its_reward(tiny):
    store, qs = tiny
    env = Env(store, qs, max_steps=3)
    env.reset(1)
    out = [env.step(("search_artifacts", {"query": "checkout outage"})) for _ in range(3)]
    assert [o[1] for o in out] == [False, False, True]
    assert out[-1][2] == score(qs.questions[1], env.trace, store.manifest.evaluation.scoring).s_adj
    assert env.trace.status == "step_budget"


def test_same_calls_same_trace_and_reward(tiny):
    store, qs = tiny
    plan = [
        ("search_artifacts", {"query": "postmortem INC-42", "limit": 5}),
        ("fetch_artifact", {"artifact_id": "x"}),
        ("submit_answer", {"answer": {"exists": True}}),
    ]

    def play():
        env = Env(store, qs)
        q = next(q for q in qs.questions if "exists" in q.answer_schema["properties"])
        env.reset(q.id)
        return [env.step(c)[2] for c in plan], strip_timings(env.trace)

    assert play() == play()


def test_shaped_env_reward_and_context_mode(tiny):
    store, qs = tiny
    env = Env(store, qs, shaped=True, mode="context")
    q = next(q for q in qs.questions if "could_actor_have_known" in q.answer_schema["properties"])
    obs = env.reset(q.id)
    assert [s["function"]["name"] for s in obs["tool_specs"]] == ["submit_answer"]
    assert isinstance(obs["context"], list)
    result, done, r, info = env.step(("submit_answer", {"answer": {"could_actor_have_known": False}}))
    assert done and info["score"]["shaped"] is True and r <= info["score"]["s_adj"]


def test_from_pack_owns_its_store(tiny_pack):
    with Env.from_pack(tiny_pack) as env:
        assert len(env) == 21
        env.reset(0)
    with Env.from_pack(tiny_pack) as env, pytest.raises(KeyError):
        env.reset("no-such-question")


def test_parse_tool_call_shapes():
    assert parse_tool_call({"name": "a", "arguments": {"x": 1}}) == ("a", {"x": 1})
    assert parse_tool_call({"function": {"name": "a", "arguments": '{"x": 1}'}}) == ("a", {"x": 1})
    assert parse_tool_call(("a", None)) == ("a", None)
    assert parse_tool_call({"tool": "a", "arguments": ""}) == ("a", {})
    assert parse_tool_call("nonsense") == ("nonsense", None)
