"""Issue 30 item 8 through the ``verifiers`` environment: every call the model makes — a tool
name the environment does not have, arguments text that is not JSON, arguments of the wrong
types — reaches the episode's trace as it was sent, recorded as the Python API records the same
calls (``Episode.call``), so the trace, the RL reward and every metric are the same by either
route. A full rollout (a real local OpenAI-compatible server playing the calls, verifiers'
interception endpoint, the tool server subprocess, the harness over MCP), and the tool server
alone behind a real MCP client for clients that call the listed tools directly."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

vf = pytest.importorskip(
    "verifiers.v1",
    reason="verifiers is not installed: bash .ci/extras/verifiers.sh (a venv "
    "of its own: verifiers 0.4 pins mcp==2.0.0, groundeval's mcp/dev extras need mcp>=2.3)",
)

from verifiers_rollout import as_value, comparable, direct, recorded, rollout, scripts, tasks  # noqa: E402

import groundeval  # noqa: E402
from groundeval.rl.reward import reward  # noqa: E402
from groundeval.trace.model import Trace  # noqa: E402

UNKNOWN = ("lookup_owner", {"team": "storage"})
UNPARSABLE = ("fetch_artifact", '{"artifact_id": "PM-4')  # the model's text, cut off
WRONG_TYPES = [
    ("search_artifacts", {"query": 5}),
    ("search_artifacts", {"query": "checkout", "limit": "five"}),
    ("fetch_artifact", {"artifact_id": ["JIRA-42"]}),
    ("submit_answer", {"answer": '{"could_actor_have_known": false}'}),  # the object as a text
]
NOT_AN_OBJECT = ("search_artifacts", '["checkout"]')  # JSON text, but not of an object
# What a Python API caller passes for the same call: the value that text is (the cut-off text
# above is no value, so it goes on as the text it is)
AS_VALUE = (NOT_AN_OBJECT[0], ["checkout"])


def _scores(store, question, trace) -> dict[str, Any]:
    detail = reward(question, trace, config=store.manifest.evaluation.scoring, detail=True)
    assert isinstance(detail, dict)
    return detail


@pytest.mark.slow  # one full rollout (a tool server subprocess): ~8 s
def test_a_rollouts_unknown_tools_and_bad_arguments_are_recorded_as_the_python_api_records_them(
    tiny_questions, monkeypatch
):
    store, qs = tiny_questions
    # the leaky baseline's path: a flagged call, so v (and S_adj) depends on every call counted
    question, _name, path, _trace = scripts(store, qs)[1]
    calls = [UNKNOWN, UNPARSABLE, *WRONG_TYPES, NOT_AN_OBJECT, *path]
    episode, model = rollout(tasks()[question.id], calls, monkeypatch)
    assert not episode.errors, episode.errors
    assert len(model.requests) == len(calls) + 1  # every call answered, then the policy stopped
    (rolled,) = episode.traces
    served = Trace.model_validate(rolled.state.ge_trace)
    api = direct(store, question, [AS_VALUE if c is NOT_AN_OBJECT else c for c in calls])

    # every call reached the trace, as sent, with the Python API's record
    assert [(c.tool, c.status) for c in served.calls][:7] == [(name, "invalid") for name, _ in calls[:7]]
    assert served.calls[1].arguments == {"_arguments": UNPARSABLE[1]}
    assert served.calls[2].arguments == {"query": 5}
    assert served.calls[6].arguments == {"_arguments": ["checkout"]}
    assert recorded(served) == recorded(api)
    assert comparable(served) == comparable(api)
    assert served.status == api.status == "completed"

    # the same trace scores the same: the scorer's verdict, the reward and every metric
    config = store.manifest.evaluation.scoring
    by_rollout = groundeval.score(qs, [served], config=config)[0]
    by_api = groundeval.score(qs, [api], config=config)[0]
    assert by_rollout.model_dump() == by_api.model_dump()
    expected = _scores(store, question, api)
    assert rolled.rewards["rl_reward"].score == expected["reward"]
    assert rolled.metrics["s_adj"] == expected["s_adj"] == by_api.s_adj
    for key in ("rl_penalty", "s_answer", "s_traj", "s_combined", "penalty", "violation_rate"):
        assert rolled.metrics[key] == expected[key], key
    # the invalid calls count in v: dropping them would have scored another S_adj
    dropped = direct(store, question, path)
    assert _scores(store, question, dropped)["s_adj"] != expected["s_adj"]


def test_the_tool_server_records_any_call_a_client_sends_over_mcp(tiny_questions):
    """Clients other than the bundled harness call the listed tools directly: wrong types and
    unlisted names reach the episode too (the MCP server's own schema check is bypassed)."""
    from mcp import Client

    from groundeval.rl.verifiers_env import ARGUMENTS_META, GroundevalData, GroundevalToolset, GroundevalToolsetConfig

    store, qs = tiny_questions
    question = qs.questions[0]
    calls = [UNKNOWN, *WRONG_TYPES, ("search_artifacts", {"query": "checkout", "shadow": True}), ("fetch_artifact", {})]
    toolset = GroundevalToolset(GroundevalToolsetConfig())
    data = GroundevalData(id=question.id, name=question.id, prompt="", pack="tiny", question_id=question.id)

    async def main() -> list[Any]:
        from mcp.server.mcpserver import MCPServer

        await toolset.setup_task(data)
        server = MCPServer("groundeval")
        toolset.register(server)
        async with Client(server) as client:
            listed = sorted(t.name for t in (await client.list_tools()).tools)
            assert listed == ["fetch_artifact", "search_artifacts", "submit_answer"]
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
            # the raw text in _meta wins over the arguments object
            results.append(await client.call_tool(*UNPARSABLE[:1], {}, meta={ARGUMENTS_META: UNPARSABLE[1]}))
        return results

    results = asyncio.run(main())
    assert [r.is_error for r in results] == [True] + [False] * (len(results) - 1)  # an unlisted name
    api = direct(store, question, [*calls, UNPARSABLE])
    assert [c.status for c in toolset.episode.trace.calls] == ["invalid"] * len(results)
    assert recorded(toolset.episode.trace) == recorded(api)
    assert toolset.episode.trace.submissions == api.submissions


_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12)  # JSON-RPC carries no lone surrogate
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_NAMES = st.sampled_from(["search_artifacts", "fetch_artifact", "submit_answer", "lookup_owner"]) | _TEXT
_ARGUMENTS = st.dictionaries(st.sampled_from(["query", "limit", "subsystem", "artifact_id", "answer"]) | _TEXT, _JSON)
# what a client sends: an arguments object, or the model's raw text in _meta (JSON or not)
_CALLS = st.lists(st.tuples(_NAMES, _ARGUMENTS | _TEXT | _JSON.map(json.dumps)), min_size=1, max_size=5)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=_CALLS)
def test_property_any_call_over_mcp_is_recorded_as_the_python_api_records_it(tiny_questions, calls):
    """Random names (listed, unlisted, any text) with random arguments objects or raw texts: the
    tool server records each as `Episode.call` records the same call (~2 s)."""
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    from groundeval.rl.verifiers_env import ARGUMENTS_META, GroundevalData, GroundevalToolset, GroundevalToolsetConfig

    store, qs = tiny_questions
    question = qs.questions[0]
    toolset = GroundevalToolset(GroundevalToolsetConfig())
    data = GroundevalData(id=question.id, name=question.id, prompt="", pack="tiny", question_id=question.id)

    async def main() -> None:
        await toolset.setup_task(data)
        server = MCPServer("groundeval")
        toolset.register(server)
        async with Client(server) as client:
            for name, sent in calls:
                if isinstance(sent, dict):
                    await client.call_tool(name, sent)
                else:
                    await client.call_tool(name, {}, meta={ARGUMENTS_META: sent})

    asyncio.run(main())
    api = direct(store, question, [(n, s if isinstance(s, dict) else as_value(s)) for n, s in calls])
    assert recorded(toolset.episode.trace) == recorded(api)
    assert toolset.episode.trace.submissions == api.submissions
