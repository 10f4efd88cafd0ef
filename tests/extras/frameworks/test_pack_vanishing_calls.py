"""Issue 30 item 8 for pack question episodes: a call to a tool the agent does not have, and
arguments that are not JSON, reach the trace through each framework adapter as they were sent,
and the trace scores as the same calls made through the Python API (``Episode.call``).

Each framework is driven through its plain documented route (docs/integration.md, "Agent
frameworks"), where recording needs nothing to opt into, and through the route of the first
release that named the hook itself (``legacy``): both leave the Python API's trace, so the hook
the plain route installs never records a call twice.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from conftest import need
from framework_scenarios import answered
from llm_server import MODEL, LLMServer, call, say

import groundeval
from groundeval.runtime.episode import Episode

UNKNOWN = ("lookup_owner", {"team": "storage"})
UNPARSABLE = ("fetch_artifact", '{"artifact_id": "PM-4')
# JSON that is not an object: Pydantic AI passed a list on to the tool call (TypeError, the run
# crashed) and Agent Framework recorded {"raw": value} before the fix
NOT_OBJECTS = [("search_artifacts", '["postmortem"]'), ("fetch_artifact", "null"), ("submit_answer", '"yes"')]


def _calls(questions, not_objects: bool = True) -> tuple[Any, list[tuple[str, Any]]]:
    """The answered scenario with an unknown tool, an unparsable argument text and (unless
    ``not_objects=False``) argument texts that are JSON but not an object in front."""
    scenario = answered(questions)
    return scenario.question, [UNKNOWN, UNPARSABLE, *(NOT_OBJECTS if not_objects else []), *scenario.calls]


def _as_sent(arguments: Any) -> Any:
    """What the model sent, as the Python API takes it: a JSON text decoded, any other text as it is."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _direct(store, question, calls):
    with Episode(store, question, agent="direct") as ep:
        for name, arguments in calls:
            ep.call(name, _as_sent(arguments))
    return ep.trace


def _recorded(trace) -> list[tuple[Any, ...]]:
    return [(c.tool, c.arguments, c.status, c.result_ids, c.flags, c.error) for c in trace.calls]


def _check(
    store, questions, run, script: list[Any] | None = None, not_objects: bool = True, calls: list[Any] | None = None
) -> None:
    """``run(base_url, episode)`` plays ``script`` (default: the calls as native tool calls)."""
    question, default = _calls(questions, not_objects)
    calls = default if calls is None else calls
    if script is None:
        script = [call(name, args) for name, args in calls] + [say("Submitted.")]
    with LLMServer(script) as srv, Episode(store, question, agent="framework") as ep:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run(srv.base_url, ep)
        assert not srv.llm.exhausted
    assert not [str(w.message) for w in caught if str(w.message).startswith("groundeval:")]
    direct = _direct(store, question, calls)
    assert [(c.tool, c.status) for c in ep.trace.calls][:2] == [("lookup_owner", "invalid")] + [
        (calls[1][0], "invalid")
    ]
    assert ep.trace.calls[1].arguments == _direct(store, question, calls[:2]).calls[1].arguments
    if not_objects and calls is default:
        assert [c.arguments for c in ep.trace.calls[2:5]] == [{"_arguments": ["postmortem"]}, {}, {"_arguments": "yes"}]
    assert _recorded(ep.trace) == _recorded(direct)
    assert ep.trace.status == direct.status == "completed"
    framework, api = groundeval.score(questions, [ep.trace])[0], groundeval.score(questions, [direct])[0]
    assert framework.model_dump(exclude={"agent"}) == api.model_dump(exclude={"agent"})


ROUTES = ["plain", "legacy"]


@pytest.mark.slow  # 7 s here, the SDK's import included
@pytest.mark.parametrize("route", ROUTES)
def test_openai_agents(store, questions, route):
    agents = need("agents", "openai-agents")
    openai = need("openai", "openai-agents")
    from groundeval.adapters.openai_agents import WorldCalls, gated_tools, run_sync, world_run_config

    def run(base_url: str, ep: Episode) -> None:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0)
        agent = agents.Agent(
            name="analyst",
            model=agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
            tools=gated_tools(ep),
        )
        if route == "plain":
            run_sync(agent, ep.question.text, run_config=agents.RunConfig(tracing_disabled=True))
        else:
            calls = WorldCalls(ep)
            config = world_run_config(calls, agents.RunConfig(tracing_disabled=True))
            agents.Runner.run_sync(agent, ep.question.text, hooks=calls, run_config=config, max_turns=30)

    _check(store, questions, run)


@pytest.mark.slow
def test_openai_agents_run_keeps_the_callers_hooks_and_formatter(store, questions):
    """``run_sync`` adds its recording to the caller's own run hooks and tool error formatter:
    theirs still see every call and format every other kind of tool error."""
    agents = need("agents", "openai-agents")
    openai = need("openai", "openai-agents")
    from groundeval.adapters.openai_agents import gated_tools, run_sync

    class Seen(agents.RunHooks):
        def __init__(self) -> None:
            self.responses = 0

        async def on_llm_end(self, context, agent, response) -> None:
            self.responses += 1

    kinds: list[str] = []

    def formatter(error):
        kinds.append(error.kind)
        return None

    seen = Seen()
    with LLMServer([call(*UNKNOWN), say("Gave up.")]) as srv, Episode(store, _calls(questions)[0]) as ep:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="local", max_retries=0)
        agent = agents.Agent(
            name="analyst",
            model=agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
            tools=gated_tools(ep),
        )
        config = agents.RunConfig(tracing_disabled=True, tool_error_formatter=formatter)
        result = run_sync(agent, ep.question.text, hooks=seen, run_config=config)
    assert result.final_output == "Gave up."
    assert seen.responses == 2 and kinds == []  # a missing tool is the episode's to answer
    assert [(c.tool, c.status) for c in ep.trace.calls] == [("lookup_owner", "invalid")]
    reply = json.loads(srv.llm.tool_messages()[0]["content"])  # the episode's reply, not the SDK's
    assert reply["status"] == "invalid" and reply["error"] == ep.trace.calls[0].error


@pytest.mark.parametrize("route", ROUTES)
def test_langgraph(store, questions, route):
    need("langgraph", "langgraph")
    langchain_openai = need("langchain_openai", "langgraph")
    from groundeval.adapters.langgraph import agent_graph, gated_tools, world_graph

    def run(base_url: str, ep: Episode) -> None:
        model = langchain_openai.ChatOpenAI(model=MODEL, base_url=base_url, api_key="local", max_retries=0)
        graph = agent_graph(model, ep) if route == "plain" else world_graph(model, ep, gated_tools(ep))
        graph.invoke({"messages": [("user", ep.question.text)]}, {"recursion_limit": 30})

    # langchain-openai 1.7 raises (pydantic ValidationError in the model node) on tool-call
    # arguments that are JSON but neither an object nor null, before any node sees the call
    _check(store, questions, run, not_objects=False)


@pytest.mark.parametrize("route", ROUTES)
def test_pydantic_ai(store, questions, route):
    pydantic_ai = need("pydantic_ai", "pydantic-ai")
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from groundeval.adapters.pydantic_ai import WorldModel, gated_agent, gated_tools

    def run(base_url: str, ep: Episode) -> None:
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=base_url, api_key="local"))
        if route == "plain":
            gated_agent(model, ep, instructions="Answer through the tools.", retries=3).run_sync(ep.question.text)
        else:
            agent = pydantic_ai.Agent(model, instructions="Answer through the tools.", tools=gated_tools(ep), retries=3)
            agent.run_sync(ep.question.text, model=WorldModel(model, ep))

    _check(store, questions, run)


@pytest.mark.parametrize("route", ROUTES)
def test_agent_framework(store, questions, route):
    import asyncio

    agent_framework = need("agent_framework", "agent-framework")
    need("agent_framework_openai", "agent-framework")
    from agent_framework.openai import OpenAIChatCompletionClient

    from groundeval.adapters.agent_framework import GatedMiddleware, gated_tools, world_middleware

    def run(base_url: str, ep: Episode) -> None:
        client = OpenAIChatCompletionClient(model=MODEL, api_key="local", base_url=base_url)
        middleware = [GatedMiddleware(ep)] if route == "plain" else world_middleware(ep)
        agent = agent_framework.Agent(
            client=client, instructions="Answer through the tools.", tools=gated_tools(ep), middleware=middleware
        )
        asyncio.run(agent.run(ep.question.text))

    _check(store, questions, run)


@pytest.mark.parametrize("route", ROUTES)
def test_crewai(store, questions, route):
    """CrewAI's agent writes ReAct text; the actions go to the episode as written."""
    crewai = need("crewai", "crewai")
    from groundeval.adapters.crewai import gated_tools, recording, world_tools

    question, calls = _calls(questions)
    script = [
        say(
            f"Thought: I call {name}.\nAction: {name}\nAction Input: {args if isinstance(args, str) else json.dumps(args)}"
        )
        for name, args in calls
    ] + [say("Thought: I now know the final answer\nFinal Answer: Submitted.")]

    def run(base_url: str, ep: Episode) -> None:
        llm = crewai.LLM(model=MODEL, provider="openai", base_url=base_url, api_key="local", max_retries=0)
        tools = gated_tools(ep) if route == "plain" else world_tools(ep)
        agent = crewai.Agent(
            role="analyst",
            goal="Answer the question through the tools.",
            backstory="An auditor.",
            tools=tools,
            llm=llm,
            allow_delegation=False,
            max_iter=20,
            verbose=False,
        )
        task = crewai.Task(description=ep.question.text, expected_output="The answer, submitted.", agent=agent)
        if route == "plain":
            crewai.Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
            return
        with pytest.warns(DeprecationWarning, match="no longer needed"):
            with recording(ep, agent, tools):
                crewai.Crew(agents=[agent], tasks=[task], verbose=False).kickoff()

    _check(store, questions, run, script)


def test_crewai_hook_leaves_agents_without_groundeval_tools_alone(store, questions):
    """The hook the tools install is CrewAI-wide; an agent that holds none of them writes actions
    the episode never sees."""
    crewai = need("crewai", "crewai")
    from groundeval.adapters.crewai import gated_tools

    question, _ = _calls(questions)
    script = [say('Thought: I call lookup_owner.\nAction: lookup_owner\nAction Input: {"team": "storage"}')]
    script += [say("Thought: I now know the final answer\nFinal Answer: None.")]
    with LLMServer(script) as srv, Episode(store, question) as ep:
        gated_tools(ep)  # built, the hook registered, but handed to no agent
        llm = crewai.LLM(model=MODEL, provider="openai", base_url=srv.base_url, api_key="local", max_retries=0)
        other = crewai.Agent(role="other", goal="Answer.", backstory="Another agent.", llm=llm, verbose=False)
        task = crewai.Task(description="Say none.", expected_output="A word.", agent=other)
        crewai.Crew(agents=[other], tasks=[task], verbose=False).kickoff()
        assert len(srv.llm.requests) >= 2
    assert ep.trace.calls == []


def _plain(framework: str, base_url: str, ep: Episode) -> None:
    """The documented route with the framework's own defaults (no turn, step or retry limits)."""
    if framework == "openai-agents":
        agents, openai = need("agents", framework), need("openai", framework)
        from groundeval.adapters.openai_agents import gated_tools, run_sync

        client = openai.AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0)
        model = agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
        run_sync(agents.Agent(name="analyst", model=model, tools=gated_tools(ep)), "q")
    elif framework == "langgraph":
        need("langgraph", framework)
        langchain_openai = need("langchain_openai", framework)
        from groundeval.adapters.langgraph import agent_graph

        model = langchain_openai.ChatOpenAI(model=MODEL, base_url=base_url, api_key="local", max_retries=0)
        agent_graph(model, ep).invoke({"messages": [("user", "q")]})
    elif framework == "pydantic-ai":
        need("pydantic_ai", framework)
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        from groundeval.adapters.pydantic_ai import gated_agent

        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=base_url, api_key="local"))
        gated_agent(model, ep).run_sync("q")
    else:
        crewai = need("crewai", framework)
        from groundeval.adapters.crewai import gated_tools

        llm = crewai.LLM(model=MODEL, provider="openai", base_url=base_url, api_key="local", max_retries=0)
        agent = crewai.Agent(role="analyst", goal="Answer.", backstory="An auditor.", tools=gated_tools(ep), llm=llm)
        task = crewai.Task(description="q", expected_output="The answer, submitted.", agent=agent)
        crewai.Crew(agents=[agent], tasks=[task], verbose=False).kickoff()


@pytest.mark.slow  # 1-2 s each, but the first import of the OpenAI Agents SDK takes seconds
@pytest.mark.parametrize("framework", ["crewai", "langgraph", "openai-agents", "pydantic-ai"])
def test_a_model_that_keeps_misbehaving_is_recorded_to_the_end_under_the_frameworks_defaults(
    store, questions, framework
):
    """Five calls to a missing tool and five unparsable ones in a row, then the answer: the
    documented route, with no limit of the caller's, lets the episode's step budget decide, not
    a framework default (the OpenAI Agents SDK's 10 turns, Pydantic AI's 1 retry; CrewAI's 25
    iterations and LangGraph's recursion limit are above it here; Agent Framework's limit of
    errors in a row stays its client's: docs/integration.md)."""
    question, _ = _calls(questions)
    calls = [UNKNOWN] * 5 + [UNPARSABLE] * 5 + answered(questions).calls
    script = None
    if framework == "crewai":
        script = [
            say(f"Thought: next.\nAction: {n}\nAction Input: {a if isinstance(a, str) else json.dumps(a)}")
            for n, a in calls
        ] + [say("Thought: I now know the final answer\nFinal Answer: Submitted.")]
    _check(store, questions, lambda url, ep: _plain(framework, url, ep), script, calls=calls)


def _own_route(framework: str, base_url: str, ep: Episode) -> None:
    """The framework's own way with the adapter's tools, without the adapter's recording route."""
    import asyncio

    if framework == "openai-agents":
        agents, openai = need("agents", framework), need("openai", framework)
        from groundeval.adapters.openai_agents import gated_tools

        client = openai.AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0)
        model = agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
        agent = agents.Agent(name="analyst", model=model, tools=gated_tools(ep))
        agents.Runner.run_sync(agent, "q", run_config=agents.RunConfig(tracing_disabled=True))
    elif framework == "langgraph":
        need("langgraph", framework)
        langchain_openai = need("langchain_openai", framework)
        from langgraph.prebuilt import create_react_agent

        from groundeval.adapters.langgraph import gated_tools

        model = langchain_openai.ChatOpenAI(model=MODEL, base_url=base_url, api_key="local", max_retries=0)
        create_react_agent(model, gated_tools(ep)).invoke({"messages": [("user", "q")]})
    elif framework == "pydantic-ai":
        pydantic_ai = need("pydantic_ai", framework)
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        from groundeval.adapters.pydantic_ai import gated_tools

        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=base_url, api_key="local"))
        pydantic_ai.Agent(model, tools=gated_tools(ep)).run_sync("q")
    else:
        agent_framework = need("agent_framework", framework)
        need("agent_framework_openai", framework)
        from agent_framework.openai import OpenAIChatCompletionClient

        from groundeval.adapters.agent_framework import gated_tools

        client = OpenAIChatCompletionClient(model=MODEL, api_key="local", base_url=base_url)
        asyncio.run(agent_framework.Agent(client=client, tools=gated_tools(ep)).run("q"))


@pytest.mark.parametrize("framework", ["agent-framework", "langgraph", "openai-agents", "pydantic-ai"])
def test_a_route_that_would_lose_calls_says_so_once(store, questions, framework):
    """Built the framework's own way (no runner, graph, agent or middleware of the adapter's), a
    run records its well-formed calls, and warns once per episode that the calls the framework
    answers itself would not be recorded, naming the route that records them."""
    question, _ = _calls(questions)
    search = ("search_artifacts", {"query": "postmortem"})
    with LLMServer([call(*search), call(*search), say("Done.")]) as srv, Episode(store, question) as ep:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _own_route(framework, srv.base_url, ep)
    ours = [str(w.message) for w in caught if str(w.message).startswith("groundeval:")]
    route = {"openai-agents": "run_sync", "langgraph": "tool_node", "pydantic-ai": "gated_agent"}
    assert len(ours) == 1 and route.get(framework, "GatedMiddleware") in ours[0]
    assert [c.tool for c in ep.trace.calls] == ["search_artifacts", "search_artifacts"]


def test_the_hooks_route_answers_a_pack_episode_as_its_declared_tools_do(store, questions):
    """``world_call`` (what every framework's hook calls) on a pack episode: ``get_context`` is the
    window, not a call, where the mode declares it, and an unknown name everywhere else."""
    from groundeval.adapters.core import gated_tools, world_call

    question = answered(questions).question
    with Episode(store, question, mode="context") as ep:
        declared = {g.name: g for g in gated_tools(ep)}
        assert ep.context()  # a window to hand back
        assert world_call(ep, "get_context", "") == declared["get_context"]("") and not ep.trace.calls
        assert world_call(ep, "search_artifacts", '{"query": "x"}')["status"] == "invalid"  # not in context mode
    with Episode(store, question, mode="tool") as ep:
        assert world_call(ep, "get_context", "{}")["status"] == "invalid"
    with Episode(store, question, mode="tool") as direct:
        direct.call("get_context", {})
    assert [(c.tool, c.arguments, c.status, c.error) for c in ep.trace.calls] == [
        (c.tool, c.arguments, c.status, c.error) for c in direct.trace.calls
    ]
