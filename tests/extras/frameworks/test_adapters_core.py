"""The shared core of the framework adapters (no framework needed): what each mode declares,
and that whatever a model sends becomes a recorded call, never an exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.adapters.core import gated_tools, pack_call, parse_arguments, require
from groundeval.runtime.episode import Episode
from groundeval.runtime.tools import tool, tool_specs

STATUSES = {"ok", "not_found", "denied", "invalid", "error"}


def _question(questions, track="perspective"):
    return next(q for q in questions.questions if q.track == track)


def test_tool_mode_declares_what_groundeval_serves(store, questions):
    q = _question(questions)
    with Episode(store, q) as ep:
        tools = gated_tools(ep)
    served = [s["function"] for s in tool_specs("openai", q.answer_schema)]
    assert [(t.name, t.description, t.parameters) for t in tools] == [
        (s["name"], s["description"], s["parameters"]) for s in served
    ]
    assert tools[2].parameters["properties"]["answer"] == q.answer_schema  # the question's own answer shape


def test_context_mode_lists_get_context_then_submit(store, questions):
    q = _question(questions)
    with Episode(store, q, mode="context") as ep:
        get_context, submit = gated_tools(ep)
        assert (get_context.name, submit.name) == ("get_context", "submit_answer")
        assert get_context.description == tool("get_context").description
        reply = json.loads(get_context.text("{}"))
        assert reply == {"status": "ok", "context": json.loads(json.dumps(ep.context(), sort_keys=True))}
        assert reply["context"] and not ep.trace.calls  # the window is not a call
        assert submit.text({"answer": {"could_actor_have_known": True}})
    assert [c.tool for c in ep.trace.calls] == ["submit_answer"]


def test_zero_shot_offers_submit_only(store, questions):
    with Episode(store, _question(questions), mode="zero-shot") as ep:
        assert [t.name for t in gated_tools(ep)] == ["submit_answer"]


def test_text_that_is_not_json_is_recorded_invalid(store, questions):
    with Episode(store, _question(questions)) as ep:
        search = gated_tools(ep)[0]
        reply = json.loads(search.text('{"query": "postmortem", '))
    assert reply["status"] == "invalid"
    (call,) = ep.trace.calls
    assert (call.status, call.arguments) == ("invalid", {"_arguments": '{"query": "postmortem", '})


def test_empty_argument_text_is_an_empty_object():
    assert parse_arguments("") == {} and parse_arguments("  ") == {}
    assert parse_arguments(b'{"a": 1}') == {"a": 1}
    assert parse_arguments([1]) == [1]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
RAW = st.one_of(
    JSON,
    st.text(max_size=40),
    JSON.map(json.dumps),
    st.fixed_dictionaries({"query": JSON, "limit": JSON, "artifact_id": JSON, "answer": JSON}),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_anything_sent_is_a_recorded_call(store, questions, data):
    """Each call to a tool-mode tool is recorded once, its reply is JSON with a known status."""
    with Episode(store, _question(questions)) as ep:
        tools = gated_tools(ep)
        sent = data.draw(st.lists(st.tuples(st.sampled_from(tools), RAW), min_size=1, max_size=4))
        for i, (gated, raw) in enumerate(sent):
            if ep.done:
                break
            reply = json.loads(gated.text(raw))
            assert reply["status"] in STATUSES
            assert ep.trace.calls[-1].index == i and ep.trace.calls[-1].tool == gated.name


NAMES = st.one_of(
    st.sampled_from(["search_artifacts", "fetch_artifact", "submit_answer", "get_context", "lookup_owner"]),
    st.text(max_size=12),
)


def _decoded(raw):
    """What the model sent, as the Python API takes it: a JSON text decoded, any other text as it is."""
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except ValueError:
            return raw
    return raw


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sent=st.lists(st.tuples(NAMES, RAW), min_size=1, max_size=4))
def test_the_hooks_route_records_what_the_python_api_records(store, questions, sent):
    """``pack_call`` (every framework hook's way into a pack episode: unknown names, texts that are
    not JSON) gives each call the reply and the record ``Episode.call`` gives the same call."""
    question = _question(questions)
    with Episode(store, question, agent="hook") as hooked, Episode(store, question, agent="api") as api:
        for name, raw in sent:
            assert pack_call(hooked, name, raw) == api.call(name, _decoded(raw))
    key = [(c.tool, c.arguments, c.status, c.result_ids, c.flags, c.error) for c in hooked.trace.calls]
    assert key == [(c.tool, c.arguments, c.status, c.result_ids, c.flags, c.error) for c in api.trace.calls]
    assert len(key) == len(sent)  # none dropped (within the step budget)


def test_a_missing_framework_names_its_extra():
    with pytest.raises(
        ImportError,
        match=r"needs the 'crewai' extra \(module 'groundeval_no_such_module' is not "
        r"installed\): pip install 'groundeval\[crewai\]'",
    ):
        require("crewai", "groundeval_no_such_module")
