"""World episodes through each framework adapter: a real agent of each of the five frameworks,
against the scripted local model, plays a task of the test world ``shop`` (talking through
``say_to_user``, or through its final output) and leaves the trace — and the verdict — the same
steps leave through the Python API; unknown tool names and arguments that are not JSON are
recorded as sent, as the Python API records them."""

from __future__ import annotations


import json

import pytest
from conftest import need
from llm_server import MODEL, LLMServer
from world_scenarios import SCENARIOS, SHOP, WorldScenario, assert_same_as_direct

agents = need("agents", "openai-agents")
openai = need("openai", "openai-agents")
need("langgraph", "langgraph")
langchain_openai = need("langchain_openai", "langgraph")
crewai = need("crewai", "crewai")
agent_framework = need("agent_framework", "agent-framework")
need("agent_framework_openai", "agent-framework")
pydantic_ai = need("pydantic_ai", "pydantic-ai")

from groundeval.adapters.core import SAY_TO_USER  # noqa: E402
from groundeval.worlds import load_world  # noqa: E402
from groundeval.worlds.episode import run_episode  # noqa: E402
from groundeval.worlds.tools import tool_infos  # noqa: E402


@pytest.fixture(scope="module")
def shop():
    w = load_world(SHOP)
    yield w
    w.close()


def _openai_agents(base_url: str, say_to_user: bool):
    from groundeval.adapters.openai_agents import WorldAgent

    client = openai.AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0)
    model = agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    return WorldAgent(
        lambda tools, ep: agents.Agent(name="desk", instructions=ep.policy, model=model, tools=tools),
        say_to_user=say_to_user,
        run_config=agents.RunConfig(tracing_disabled=True),
    )


def _langgraph(base_url: str, say_to_user: bool):
    from groundeval.adapters.langgraph import WorldAgent, agent_graph

    model = langchain_openai.ChatOpenAI(model=MODEL, base_url=base_url, api_key="local", max_retries=0)
    return WorldAgent(lambda tools, ep: agent_graph(model, ep, tools), name="langgraph", say_to_user=say_to_user)


def _pydantic_ai(base_url: str, say_to_user: bool):
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from groundeval.adapters.pydantic_ai import WorldAgent

    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=base_url, api_key="local"))
    return WorldAgent(
        lambda tools, ep: pydantic_ai.Agent(model, instructions=ep.policy, tools=tools),
        name="pydantic-ai",
        say_to_user=say_to_user,
    )


def _agent_framework(base_url: str, say_to_user: bool):
    from agent_framework.openai import OpenAIChatCompletionClient

    from groundeval.adapters.agent_framework import WorldAgent

    client = OpenAIChatCompletionClient(model=MODEL, api_key="local", base_url=base_url)
    return WorldAgent(  # the plain route: WorldAgent adds the recording middleware itself
        lambda tools, ep: agent_framework.Agent(client=client, instructions=ep.policy, tools=tools),
        name="agent-framework",
        say_to_user=say_to_user,
    )


def _crewai(base_url: str, say_to_user: bool):
    from groundeval.adapters.crewai import WorldAgent

    llm = crewai.LLM(model=MODEL, provider="openai", base_url=base_url, api_key="local", max_retries=0)
    return WorldAgent(
        lambda tools, ep: crewai.Agent(
            role="support agent",
            goal="Help the user as the shop's policy says.",
            backstory="A support desk agent.",
            tools=tools,
            llm=llm,
            allow_delegation=False,
            max_iter=ep.max_steps,
            verbose=False,
        ),
        name="crewai",
        say_to_user=say_to_user,
    )


RUNNERS = {
    "crewai": _crewai,
    "openai-agents": _openai_agents,
    "langgraph": _langgraph,
    "pydantic-ai": _pydantic_ai,
    "agent-framework": _agent_framework,
}


def _declared(request, world, say_to_user: bool) -> None:
    """The model was told the world's tools with their JSON Schemas (and say_to_user)."""
    sent = {t["function"]["name"]: t["function"] for t in request["tools"]}
    expected = {t["name"]: t for t in tool_infos(world.manifest.tools)}
    assert sorted(sent) == sorted([*expected, *([SAY_TO_USER] if say_to_user else [])])
    for name, tool in expected.items():
        assert sent[name]["description"] == tool["description"]
        assert sent[name]["parameters"] == tool["parameters"]


def _told_in_prompt(request, world, say_to_user: bool) -> None:
    """CrewAI (ReAct) names each tool in the prompt with its description and JSON Schema."""
    prompt = "\n".join(m["content"] for m in request["messages"] if isinstance(m.get("content"), str))
    for tool in tool_infos(world.manifest.tools):
        assert f"Tool Name: {tool['name']}\nTool Arguments: {json.dumps(tool['parameters'])}\n" in prompt
    assert (f"Tool Name: {SAY_TO_USER}\n" in prompt) == say_to_user


@pytest.mark.slow
@pytest.mark.parametrize("make", SCENARIOS, ids=[m.__name__ for m in SCENARIOS])
@pytest.mark.parametrize("framework", sorted(RUNNERS))
def test_world_episode_is_the_python_api_episode(shop, framework, make):
    scenario: WorldScenario = make()
    say_to_user = scenario.task != "cancel-pending"
    with LLMServer(scenario.react_script() if framework == "crewai" else scenario.script()) as srv:
        agent = RUNNERS[framework](srv.base_url, say_to_user)
        trace = run_episode(shop, shop.task(scenario.task), agent)
    assert trace.error is None, trace.error
    assert not srv.llm.exhausted, trace
    if framework == "crewai":
        _told_in_prompt(srv.llm.requests[0], shop, say_to_user)
    else:
        _declared(srv.llm.requests[0], shop, say_to_user)
    assert_same_as_direct(shop, scenario, trace)


@pytest.mark.slow
def test_crewai_calls_are_recorded_as_written_not_as_crewai_rewrites_them(shop):
    """CrewAI maps a near name to a tool ("get_ordr" -> get_order), repairs input that is not JSON
    and refuses a call repeated as is; the trace still holds each call as the model wrote it."""
    from world_scenarios import FINAL, SAY

    steps = [
        ("get_order", {"order_id": "O-1003"}),
        ("get_order", {"order_id": "O-1003"}),  # a repeat CrewAI answers itself
        ("get_ordr", {"order_id": "O-1003"}),  # close enough for CrewAI, unknown to the world
        ("get_order", "{'order_id': 'O-1003'}"),  # a Python literal CrewAI would accept
        (SAY, {"text": "Order O-1003 is shipped. Is there anything else I can help with?", "done": True}),
        (FINAL, "Goodbye."),
    ]
    scenario = WorldScenario(
        "status-only",
        steps,
        "policy_breach",
        invalid=(("get_ordr", {"order_id": "O-1003"}), ("get_order", {"_": "{'order_id': 'O-1003'}"})),
    )
    with LLMServer(scenario.react_script()) as srv:
        trace = run_episode(shop, shop.task(scenario.task), _crewai(srv.base_url, True))
    assert trace.error is None, trace.error
    assert not srv.llm.exhausted
    assert [c.tool for c in trace.calls] == ["get_order", "get_order", "get_ordr", "get_order"]
    assert_same_as_direct(shop, scenario, trace)


class _Direct:
    """The same steps through the Python API, as a world agent."""

    name = "direct"

    def run(self, episode):
        episode.call(*LOOKUP)
        episode.say(DONE)


LOOKUP = ("get_order", {"order_id": "O-1003"})
DONE = "Is there anything else I can help with?"
RUN_TASKS = ["cancel-pending", "refund-damaged", "status-only"]


def _lines(path, drop=("agent",)):
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in row.items() if k not in drop} for row in rows]


@pytest.mark.slow
@pytest.mark.parametrize("framework", sorted(RUNNERS))
def test_run_world_with_a_framework_agent_writes_the_python_api_run(shop, framework, tmp_path):
    """``run_world`` takes each adapter's WorldAgent: its traces and verdicts are those of the
    same steps through the Python API, task by task."""
    from llm_server import call, say

    from groundeval.worlds.run import run_world

    if framework == "crewai":
        turns = [
            say(f"Thought: I look.\nAction: {LOOKUP[0]}\nAction Input: {json.dumps(LOOKUP[1])}"),
            say(f"Thought: I now know the final answer\nFinal Answer: {DONE}"),
        ]
    else:
        turns = [call(*LOOKUP), say(DONE)]
    with LLMServer(turns * len(RUN_TASKS)) as srv:
        run_world(shop, RUNNERS[framework](srv.base_url, True), tmp_path / "fw", task_ids=RUN_TASKS)
    assert not srv.llm.exhausted
    run_world(shop, _Direct(), tmp_path / "direct", task_ids=RUN_TASKS)
    for name in ("traces.jsonl", "verdicts.jsonl"):
        got, expected = _lines(tmp_path / "fw" / name), _lines(tmp_path / "direct" / name)
        assert got == expected and len(got) == len(RUN_TASKS)
    assert {row["task_id"] for row in _lines(tmp_path / "fw" / "traces.jsonl")} == set(RUN_TASKS)


@pytest.mark.slow
@pytest.mark.parametrize("middleware", ["world_middleware", "GatedMiddleware"])
def test_agent_framework_world_agent_records_once_when_the_build_brings_the_middleware(shop, middleware):
    """A build written for the first release passes the recording middleware itself; WorldAgent
    then adds none, and each call is recorded once, as the Python API records it."""
    from agent_framework.openai import OpenAIChatCompletionClient
    from world_scenarios import invalid_calls

    from groundeval.adapters import agent_framework as adapter

    scenario = invalid_calls()
    with LLMServer(scenario.script()) as srv:
        client = OpenAIChatCompletionClient(model=MODEL, api_key="local", base_url=srv.base_url)

        def build(tools, ep):
            own = adapter.world_middleware(ep) if middleware == "world_middleware" else [adapter.GatedMiddleware(ep)]
            return agent_framework.Agent(client=client, instructions=ep.policy, tools=tools, middleware=own)

        trace = run_episode(shop, shop.task(scenario.task), adapter.WorldAgent(build, name="agent-framework"))
    assert not srv.llm.exhausted
    assert_same_as_direct(shop, scenario, trace)


@pytest.mark.slow
@pytest.mark.parametrize("framework", sorted(set(RUNNERS) - {"langgraph"}))
def test_arguments_that_are_json_but_not_an_object_are_recorded_as_the_python_api_records_them(shop, framework):
    """A list and ``null`` as a world tool's arguments, through each framework's WorldAgent (not
    LangGraph's: langchain-openai 1.7 raises on a list before any node, docs/integration.md)."""
    from world_scenarios import not_objects

    scenario = not_objects()
    with LLMServer(scenario.react_script() if framework == "crewai" else scenario.script()) as srv:
        trace = run_episode(shop, shop.task(scenario.task), RUNNERS[framework](srv.base_url, True))
    assert not srv.llm.exhausted, trace
    assert_same_as_direct(shop, scenario, trace)


def test_agent_framework_world_agent_keeps_one_recording_middleware_on_a_reused_agent(shop):
    """A build that hands back the same agent for every episode: its recording middleware is the
    current episode's, never one per episode so far (which would send calls to a finished one)."""
    from agent_framework.openai import OpenAIChatCompletionClient

    from groundeval.adapters.agent_framework import GatedMiddleware, WorldAgent
    from groundeval.worlds.episode import WorldEpisode

    client = OpenAIChatCompletionClient(model=MODEL, api_key="local", base_url="http://127.0.0.1:9/v1")
    built = agent_framework.Agent(client=client, instructions="x", tools=[])
    world_agent = WorldAgent(lambda tools, ep: built, name="agent-framework")
    try:
        for task in ("status-only", "refund-damaged"):
            episode = WorldEpisode(shop, shop.task(task), agent="agent-framework")
            world_agent.turns(episode)
            ours = [m for m in built.middleware if isinstance(m, GatedMiddleware)]
            assert len(ours) == 1 and ours[0].episode is episode
    finally:
        world_agent.close()
