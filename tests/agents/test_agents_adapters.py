"""Full episodes through each provider adapter against a real local HTTP server.

The server speaks the provider's wire format with scripted replies: an HTTP 429
(then success), a search, a malformed tool call, an unknown tool, a fetch and the
final submission — which the adapter must force on the last step.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from groundeval.agents.anthropic_messages import anthropic_agent
from groundeval.agents.openai_chat import openai_agent
from groundeval.agents.runner import run_episode
from groundeval.questions.model import PerspectiveTruth, Question
from groundeval.store.store import Store

SCHEMA = {
    "type": "object",
    "properties": {
        "could_actor_have_known": {"type": "boolean"},
        "evidence_artifacts": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["could_actor_have_known"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def store(tiny_pack):
    s = Store.open(tiny_pack)
    yield s
    s.close()


def question() -> Question:
    truth = PerspectiveTruth(
        could_actor_have_known=True,
        target_event_id="e4",
        target_event_type="incident_resolved",
        target_artifacts=["JIRA-42"],
        evidence_artifacts=["JIRA-42"],
        blocked_subsystems=[],
    )
    return Question(
        id="q-adapter",
        track="perspective",
        bucket="positive",
        difficulty="easy",
        text="Could alice have known that INC-42 was resolved as of March 5?",
        actor="alice",
        as_of=datetime(2026, 3, 5, 12, tzinfo=timezone.utc),
        gates=["horizon", "subsystem", "actor"],
        answer_schema=SCHEMA,
        ground_truth=truth,
    )


# ----------------------------------------------------------------------------- OpenAI wire format


def oa_reply(calls: list[tuple[str, str]], usage=(10, 5)) -> tuple[int, dict, dict]:
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(calls)
    ]
    msg = {"role": "assistant", "content": None if calls else "thinking", "tool_calls": tool_calls or None}
    return (
        200,
        {},
        {
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
        },
    )


def test_openai_full_episode(scripted_server, store):
    s = scripted_server
    s.add(
        (429, {"Retry-After": "0"}, {"error": {"message": "rate limited"}}),
        oa_reply([("search_artifacts", json.dumps({"query": "checkout INC-42", "limit": 3}))]),
        oa_reply([("fetch_artifact", '{"artifact_id": "JIRA-42"')]),  # malformed JSON
        oa_reply([("delete_everything", "{}")]),  # unknown tool
        oa_reply([("fetch_artifact", json.dumps({"artifact_id": "JIRA-42"}))]),
        lambda body: oa_reply(
            [
                (
                    "submit_answer",
                    json.dumps({"answer": {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}}),
                )
            ]
        ),
    )
    agent = openai_agent("local-model", base_url=s.url + "/v1", api_key="sk-test", retries=2, backoff=0.01)
    trace = run_episode(store, question(), agent, max_steps=5)

    assert trace.status == "completed" and trace.agent == "openai:local-model"
    assert [c.tool for c in trace.calls] == [
        "search_artifacts",
        "fetch_artifact",
        "delete_everything",
        "fetch_artifact",
        "submit_answer",
    ]
    assert [c.status for c in trace.calls] == ["ok", "invalid", "invalid", "ok", "ok"]
    assert trace.calls[1].arguments == {"_arguments": '{"artifact_id": "JIRA-42"'}
    assert trace.final_answer == {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}
    # the 429 was retried: six HTTP requests, five completions, usage summed per completion
    assert len(s.requests) == 6
    assert trace.usage == {"input_tokens": 50, "output_tokens": 25, "total_tokens": 75, "requests": 5, "retries": 1}
    assert [m["usage"]["input_tokens"] for m in trace.messages if m.get("role") == "assistant"] == [10] * 5
    path, headers, first = s.requests[1]
    assert path == "/v1/chat/completions" and headers["authorization"] == "Bearer sk-test"
    assert first["model"] == "local-model" and first["temperature"] == 0.0 and first["tool_choice"] == "auto"
    submit = [t for t in first["tools"] if t["function"]["name"] == "submit_answer"][0]
    assert submit["function"]["parameters"]["properties"]["answer"] == SCHEMA
    # tool results go back with their call ids; errors are shown to the model, not raised
    last = s.requests[-1][2]["messages"]
    tool_msgs = [m for m in last if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["call_0"] * 4
    assert json.loads(tool_msgs[1]["content"])["status"] == "invalid"
    assert json.loads(tool_msgs[3]["content"])["artifact"]["id"] == "JIRA-42"
    # max_steps=5: after four calls one step is left, so the last request forces submit_answer
    assert s.requests[-1][2]["tool_choice"] == {"type": "function", "function": {"name": "submit_answer"}}
    assert all(r[2]["tool_choice"] == "auto" for r in s.requests[1:-1])


def test_openai_model_that_never_calls_a_tool_is_forced_then_stops(scripted_server, store):
    s = scripted_server
    s.add(*[oa_reply([]) for _ in range(20)])
    agent = openai_agent("m", base_url=s.url, retries=0)
    trace = run_episode(store, question(), agent, max_steps=3)
    assert trace.status == "no_answer" and trace.calls == []
    forced = [r[2]["tool_choice"] for r in s.requests]
    assert forced[:2] == ["auto", "auto"] and forced[2]["function"]["name"] == "submit_answer"
    assert len(s.requests) == 3 * 2 + 4  # bounded: the loop gives up


def test_openai_fatal_error_stops_the_run(scripted_server, store):
    from groundeval.agents.http import ProviderError

    scripted_server.add((401, {}, {"error": {"message": "invalid api key"}}))
    with pytest.raises(ProviderError, match="invalid api key"):
        run_episode(store, question(), openai_agent("m", base_url=scripted_server.url, retries=3), max_steps=3)


def test_exhausted_retries_are_an_error_trace(scripted_server, store):
    scripted_server.add(*[(503, {}, {"error": "overloaded"})] * 2)
    trace = run_episode(store, question(), openai_agent("m", base_url=scripted_server.url, retries=1, backoff=0.01))
    assert trace.status == "error" and "503" in trace.messages[-1]["error"]


# ----------------------------------------------------------------------------- Anthropic wire format


def an_reply(blocks: list[dict], usage=(20, 7)) -> tuple[int, dict, dict]:
    return (
        200,
        {},
        {
            "id": "msg",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": blocks,
            "stop_reason": "tool_use",
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        },
    )


def use(i: int, name: str, inp) -> dict:
    return {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": inp}


def test_anthropic_full_episode(scripted_server, store):
    s = scripted_server
    s.add(
        (429, {"retry-after": "0"}, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}),
        an_reply(
            [{"type": "text", "text": "Let me search."}, use(1, "search_artifacts", {"query": "INC-42 resolved"})]
        ),
        an_reply([use(2, "fetch_artifact", "JIRA-42")]),  # arguments not an object
        an_reply(
            [use(3, "fetch_artifact", {"artifact_id": "JIRA-42"}), use(4, "read_minds", {"who": "alice"})]
        ),  # two calls, one unknown
        an_reply(
            [use(5, "submit_answer", {"answer": {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}})]
        ),
    )
    agent = anthropic_agent("claude-test", base_url=s.url, api_key="ak", retries=2, backoff=0.01, temperature=0.3)
    trace = run_episode(store, question(), agent, max_steps=5)

    assert trace.status == "completed"
    assert [(c.tool, c.status) for c in trace.calls] == [
        ("search_artifacts", "ok"),
        ("fetch_artifact", "invalid"),
        ("fetch_artifact", "ok"),
        ("read_minds", "invalid"),
        ("submit_answer", "ok"),
    ]
    assert trace.calls[2].result_ids == ["JIRA-42"]
    assert trace.usage == {"input_tokens": 80, "output_tokens": 28, "total_tokens": 108, "requests": 4, "retries": 1}
    path, headers, first = s.requests[1]
    assert path == "/v1/messages" and headers["x-api-key"] == "ak" and headers["anthropic-version"]
    assert first["temperature"] == 0.3 and first["max_tokens"] == 1024 and first["tool_choice"] == {"type": "auto"}
    assert first["system"] and first["messages"][0]["role"] == "user"
    assert "Could alice have known" in first["messages"][0]["content"][0]["text"]
    # results of both calls in one user turn, the unknown tool marked as an error
    results = s.requests[-1][2]["messages"][-1]["content"]
    assert [(b["tool_use_id"], b["is_error"]) for b in results] == [("toolu_3", False), ("toolu_4", True)]
    # one step left before the last request: submit_answer is forced
    assert s.requests[-1][2]["tool_choice"] == {"type": "tool", "name": "submit_answer"}


def test_anthropic_context_mode_offers_only_submit(scripted_server, store):
    s = scripted_server
    s.add(
        lambda body: an_reply(
            [use(1, "submit_answer", {"answer": {"could_actor_have_known": False, "evidence_artifacts": []}})]
        )
    )
    trace = run_episode(store, question(), anthropic_agent("c", base_url=s.url), mode="context", max_steps=4)
    assert trace.status == "completed" and trace.mode == "context"
    body = s.requests[0][2]
    assert [t["name"] for t in body["tools"]] == ["submit_answer"]
    prompt = body["messages"][0]["content"][0]["text"]
    assert all(aid in prompt for aid in trace.context_ids) and trace.context_ids
