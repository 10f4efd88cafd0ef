"""OpenAI Agents SDK: a real ``agents.Agent`` answers through the gated tools."""

from __future__ import annotations

import pytest
from conftest import need
from framework_scenarios import answered, assert_replies_returned, check_agent_like_direct_calls, misbehaves
from llm_server import MODEL, LLMServer

agents = need("agents", "openai-agents")
openai = need("openai", "openai-agents")

from groundeval.adapters.openai_agents import gated_tools  # noqa: E402
from groundeval.runtime.episode import Episode  # noqa: E402

# these tests run the framework's own route on purpose (well-formed calls); the adapter warns that
# the calls the framework answers itself would not be recorded there (test_pack_vanishing_calls.py)
pytestmark = pytest.mark.filterwarnings("ignore:groundeval:UserWarning")


def _run(store, scenario):
    with LLMServer(scenario.script()) as srv, Episode(store, scenario.question, agent="openai-agents") as ep:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="local", max_retries=0)
        model = agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
        agent = agents.Agent(
            name="analyst", instructions="Answer through the tools.", model=model, tools=gated_tools(ep)
        )
        result = agents.Runner.run_sync(
            agent, ep.question.text, max_turns=10, run_config=agents.RunConfig(tracing_disabled=True)
        )
    assert result.final_output == "Submitted."
    assert not srv.llm.exhausted
    return ep.trace, srv.llm


@pytest.mark.parametrize("make", [answered, misbehaves], ids=["answered", "misbehaves"])
def test_agent_trace_scores_as_direct_calls(store, questions, make):
    check_agent_like_direct_calls(store, questions, make, _run)


def test_arguments_that_are_not_json_are_recorded(store, questions):
    """The SDK hands the raw text on; the episode records it as an invalid call, and the model
    reads why."""
    from llm_server import call, say

    q = answered(questions).question
    script = [
        call("fetch_artifact", '{"artifact_id": "PM-4'),
        call("search_artifacts", '["postmortem"]'),
        say("Gave up."),
    ]
    with LLMServer(script) as srv, Episode(store, q, agent="openai-agents") as ep:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="local", max_retries=0)
        agent = agents.Agent(
            name="analyst",
            model=agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
            tools=gated_tools(ep),
        )
        agents.Runner.run_sync(agent, q.text, run_config=agents.RunConfig(tracing_disabled=True))
    assert [(c.tool, c.status, c.arguments) for c in ep.trace.calls] == [
        ("fetch_artifact", "invalid", {"_arguments": '{"artifact_id": "PM-4'}),
        ("search_artifacts", "invalid", {"_arguments": ["postmortem"]}),
    ]
    assert ep.trace.status == "no_answer"
    assert_replies_returned(srv.llm, ep.trace)


@pytest.mark.parametrize("make", [answered, misbehaves], ids=["answered", "misbehaves"])
def test_sdk_tracing_hook_replays_into_the_same_trace(store, questions, make):
    """RunRecorder, on the SDK's own tracing hook, keeps the run's calls; replayed, they leave
    the adapter's trace and its score."""
    import groundeval
    from groundeval.adapters.observed import trace_from_run
    from groundeval.adapters.openai_agents import RunRecorder

    scenario = make(questions)
    recorder = RunRecorder()
    agents.set_trace_processors([recorder])  # and no exporter to any service
    agents.set_tracing_disabled(False)
    try:
        with LLMServer(scenario.script()) as srv, Episode(store, scenario.question, agent="analyst") as ep:
            client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="local", max_retries=0)
            agent = agents.Agent(
                name="analyst",
                tools=gated_tools(ep),
                model=agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
            )
            agents.Runner.run_sync(agent, scenario.question.text)
    finally:
        agents.set_tracing_disabled(True)
        agents.set_trace_processors([])
    (run,) = recorder.runs
    assert run.agents == ["analyst"] and [c.tool for c in run.calls] == [name for name, _ in scenario.calls]
    replayed = trace_from_run(store, scenario.question, run)
    assert replayed.agent == "analyst"
    key = [(c.tool, c.arguments, c.status, c.result_ids, c.flags, c.error) for c in replayed.calls]
    assert key == [(c.tool, c.arguments, c.status, c.result_ids, c.flags, c.error) for c in ep.trace.calls]
    assert groundeval.score(questions, [replayed])[0] == groundeval.score(questions, [ep.trace])[0]
