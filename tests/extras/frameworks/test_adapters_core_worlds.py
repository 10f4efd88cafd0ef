"""The world part of the adapters' shared core (no framework needed): what a world episode
declares, that any call a model sends lands in the trace as the Python API records it, and the
multi-turn loop every framework adapter runs."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from world_scenarios import SHOP

from groundeval.adapters.core import SAY_TO_USER, converse, world_call, world_tools
from groundeval.worlds import STOP, load_world
from groundeval.worlds.env import WorldEnv
from groundeval.worlds.episode import WorldEpisode
from groundeval.worlds.tools import tool_infos


@pytest.fixture(scope="module")
def shop():
    w = load_world(SHOP)
    yield w
    w.close()


def _episode(shop, task="status-only"):
    return WorldEpisode(shop, shop.task(task), agent="a")


def _calls(trace):
    return [c.model_dump() for c in trace.calls]


def test_world_tools_are_the_worlds_then_say_to_user(shop):
    ep = _episode(shop)
    tools = world_tools(ep)
    served = tool_infos(shop.manifest.tools)
    assert [(t.name, t.description, t.parameters) for t in tools[:-1]] == [
        (s["name"], s["description"], s["parameters"]) for s in served
    ]
    env = WorldEnv(shop)
    env.reset("status-only")
    say = env.tool_specs()[-1]["function"]  # the RL environment's say_to_user: one pseudo-tool everywhere
    assert (tools[-1].name, tools[-1].description, tools[-1].parameters) == (
        say["name"],
        say["description"],
        say["parameters"],
    )
    assert [t.name for t in world_tools(ep, say_to_user=False)] == [s["name"] for s in served]
    ep.finish()


# (what the model sent, what a Python API caller passes for it)
SENT = [
    ("track_parcel", {"order_id": "O-1003"}, {"order_id": "O-1003"}),  # unknown name
    ("get_order", '{"order_id": "O-10', '{"order_id": "O-10'),  # not JSON: the text itself
    ("get_order", '["O-1003"]', ["O-1003"]),  # JSON, not an object
    ("get_order", b'{"order_id": 1003}', {"order_id": 1003}),  # wrong type
    ("get_order", 7, 7),
    ("get_order", "", {}),  # providers send "" for no arguments
    ("get_order", '{"order_id": "O-1003"}', {"order_id": "O-1003"}),
]


@pytest.mark.parametrize(("name", "sent", "python"), SENT, ids=[str(i) for i in range(len(SENT))])
def test_a_call_is_recorded_as_the_python_api_records_it(shop, name, sent, python):
    through_core, direct = _episode(shop), _episode(shop)
    reply = world_call(through_core, name, sent)
    assert reply == direct.call(name, python)
    assert _calls(through_core.finish()) == _calls(direct.finish())


def test_invalid_calls_are_recorded_invalid(shop):
    ep = _episode(shop)
    for name, sent, _ in SENT[:5]:
        world_call(ep, name, sent)
    trace = ep.finish()
    assert [(c.tool, c.status) for c in trace.calls] == [("track_parcel", "invalid")] + [("get_order", "invalid")] * 4
    assert trace.calls[1].arguments == {"_": '{"order_id": "O-10'}


def test_say_to_user_talks_and_a_malformed_one_is_an_invalid_call(shop):
    ep = _episode(shop)
    say = world_tools(ep)[-1]
    reply = json.loads(say.text('{"text": "Could you tell me your order id?"}'))
    assert reply == {"ok": True, "result": {"reply": "order_id: O-1003"}, "error": None}
    bad = json.loads(say.text({"message": "hello"}))
    assert bad["ok"] is False and "text" in bad["error"]
    done = json.loads(say.text({"text": "It is shipped. Anything else I can help with?", "done": True}))
    assert STOP in done["result"]["reply"] and ep.done
    trace = ep.finish()
    assert [(c.tool, c.status, c.arguments) for c in trace.calls] == [(SAY_TO_USER, "invalid", {"message": "hello"})]
    assert [m.role for m in trace.messages] == ["user", "assistant", "user", "assistant", "user"]


RAW = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=30),
    st.dictionaries(st.sampled_from(["order_id", "email", "reason", "x"]), st.text(max_size=8), max_size=3),
    st.dictionaries(st.sampled_from(["order_id", "email"]), st.text(max_size=8), max_size=2).map(json.dumps),
)
NAMES = st.sampled_from(["get_order", "find_customer", "list_orders", "cancel_order", "nope", ""])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sent=st.lists(st.tuples(NAMES, RAW), min_size=1, max_size=4))
def test_every_call_sent_is_recorded_once_and_never_raises(shop, sent):
    ep = _episode(shop, "cancel-pending")
    for i, (name, raw) in enumerate(sent):
        reply = world_call(ep, name, raw)
        json.dumps(reply)  # a reply the model can read
        assert len(ep.calls) == i + 1 and ep.calls[-1].tool == name
    ep.finish()


def test_converse_says_each_output_until_the_user_stops(shop):
    ep = _episode(shop, "status-only")
    heard: list[str] = []
    outputs = iter(["Could you tell me your order id?", "It is shipped. Anything else I can help with?", "Bye"])

    def turn(text):
        heard.append(text)
        return next(outputs)

    converse(ep, turn)
    assert heard == ["Where is my toaster?", "order_id: O-1003"]  # "Bye" never asked for: the user left
    assert ep.ended_by == "user_stop"
    assert [m.text for m in ep.messages if m.role == "assistant"][-1].startswith("It is shipped")
    ep.finish()


@pytest.mark.parametrize("last", [None, "", "   "])
def test_converse_ends_when_the_agent_says_nothing(shop, last):
    ep = _episode(shop)
    turns = []
    converse(ep, lambda text: turns.append(text) or last)
    assert len(turns) == 1 and not ep.done and len(ep.messages) == 1
    assert ep.finish().ended_by == "agent_done"


def test_converse_stops_after_max_turns(shop):
    ep = _episode(shop)
    turns = []
    converse(ep, lambda text: turns.append(text) or "Hmm.", max_turns=1)
    assert len(turns) == 1
    ep.finish()


# what a model sends (arguments as JSON text) -> what a Python API caller passes for it
ROUTES = [
    ("track_parcel", '{"order_id": "O-1003"}', {"order_id": "O-1003"}),
    ("get_order", '{"order_id": "O-10', '{"order_id": "O-10'),
    ("get_order", '["O-1003"]', ["O-1003"]),
    ("get_order", '{"order_id": 1003}', {"order_id": 1003}),
    ("get_order", '{"order_id": "O-1003"}', {"order_id": "O-1003"}),
]


def test_every_world_route_records_a_call_alike(shop):
    """Issue 30 item 8 for worlds: the Python API, the adapters' core (every framework), the RL
    environment and the LLM agent record the same calls for the same model output."""
    direct = _episode(shop)
    for name, _, python in ROUTES:
        direct.call(name, python)
    expected = _calls(direct.finish())
    assert [c["status"] for c in expected] == ["invalid"] * 4 + ["ok"]

    core = _episode(shop)
    for name, sent, _ in ROUTES:
        world_call(core, name, sent)
    assert _calls(core.finish()) == expected

    env = WorldEnv(shop)
    env.reset("status-only")
    for name, sent, _ in ROUTES:
        env.step({"type": "function", "function": {"name": name, "arguments": sent}})
    env.end()
    assert _calls(env.trace) == expected

    pytest.importorskip("httpx")
    from llm_server import LLMServer, call, say

    from groundeval.worlds.llm import LLMWorldAgent

    with LLMServer([call(name, sent) for name, sent, _ in ROUTES] + [say("")]) as srv:
        ep = _episode(shop)
        LLMWorldAgent("scripted-model", srv.base_url, retries=0).run(ep)
    assert _calls(ep.finish()) == expected
