"""A framework run captured only through its own OpenTelemetry instrumentation becomes a
groundeval trace: the spans (GenAI conventions, exported by the real OpenTelemetry SDK) import
through ``groundeval.observe`` as an observed run, whose gated calls replay through an episode
into the trace the run left through the adapter — same calls, same score (except calls
Agent Framework refuses before its tool span starts, which only the adapter records).

Recorded as the SDK's ``ReadableSpan.to_json()`` objects (what its console exporter prints).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import need
from framework_scenarios import answered, misbehaves
from llm_server import MODEL, LLMServer

import groundeval

need("opentelemetry.sdk", "otel")
pydantic_ai = need("pydantic_ai", "pydantic-ai")
agent_framework = need("agent_framework", "agent-framework")

from agent_framework.observability import enable_instrumentation  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from opentelemetry import trace as otel_trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from pydantic_ai.capabilities.instrumentation import Instrumentation  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from groundeval.adapters.agent_framework import GatedMiddleware  # noqa: E402
from groundeval.adapters.agent_framework import gated_tools as agent_framework_tools  # noqa: E402
from groundeval.adapters.observed import trace_from_run  # noqa: E402
from groundeval.adapters.pydantic_ai import gated_tools as pydantic_ai_tools  # noqa: E402
from groundeval.observe.otel import runs_from_documents  # noqa: E402
from groundeval.runtime.episode import Episode  # noqa: E402

# these tests run the framework's own route on purpose (well-formed calls); the adapter warns that
# the calls the framework answers itself would not be recorded there (test_pack_vanishing_calls.py)
pytestmark = pytest.mark.filterwarnings("ignore:groundeval:UserWarning")

EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
otel_trace.set_tracer_provider(PROVIDER)  # Agent Framework reads the global provider


def _pydantic_ai(srv, ep):
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=srv.base_url, api_key="local"))
    tracing = Instrumentation(settings=InstrumentationSettings(tracer_provider=PROVIDER, include_content=True))
    agent = pydantic_ai.Agent(model, tools=pydantic_ai_tools(ep), capabilities=[tracing])
    agent.run_sync(ep.question.text)


def _agent_framework(srv, ep):
    enable_instrumentation(enable_sensitive_data=True)
    client = OpenAIChatCompletionClient(model=MODEL, api_key="local", base_url=srv.base_url)
    agent = agent_framework.Agent(client=client, tools=agent_framework_tools(ep), middleware=[GatedMiddleware(ep)])
    asyncio.run(agent.run(ep.question.text))


def _calls(trace):
    return [(c.tool, c.arguments, c.status, c.result_ids, c.flags, c.error) for c in trace.calls]


@pytest.mark.parametrize("run_agent", [_pydantic_ai, _agent_framework], ids=["pydantic-ai", "agent-framework"])
@pytest.mark.parametrize("make", [answered, misbehaves], ids=["answered", "misbehaves"])
def test_spans_replay_into_the_same_trace(store, questions, make, run_agent):
    scenario = make(questions)
    EXPORTER.clear()
    with LLMServer(scenario.script()) as srv, Episode(store, scenario.question, agent="adapter") as ep:
        run_agent(srv, ep)
    spans = [json.loads(s.to_json()) for s in EXPORTER.get_finished_spans()]  # as the console exporter writes
    (run,) = runs_from_documents(spans, "in-memory exporter")
    if run_agent is _agent_framework and "invalid" in scenario.statuses:
        # Agent Framework refuses arguments failing its own schema check before the tool (and
        # its telemetry span) starts: only the adapter's trace (GatedMiddleware) has that call
        assert [c.tool for c in run.calls] == [c.tool for c in ep.trace.calls if c.status != "invalid"]
        return
    assert [c.tool for c in run.calls] == [name for name, _ in scenario.calls]
    replayed = trace_from_run(store, scenario.question, run)
    assert _calls(replayed) == _calls(ep.trace)
    assert replayed.final_answer == ep.trace.final_answer
    got, want = groundeval.score(questions, [replayed])[0], groundeval.score(questions, [ep.trace])[0]
    assert got.model_dump(exclude={"agent"}) == want.model_dump(exclude={"agent"})
