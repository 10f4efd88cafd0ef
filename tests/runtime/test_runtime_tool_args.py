"""Tool arguments are pydantic models: one source for the episode's checks and the declared
JSON Schemas. The declarations are pinned bytes (``golden/tools_*.json``, the output of
``groundeval tools`` before the models replaced the hand-written schemas), every schema
accepts exactly what the model accepts, and a validation error is a recorded ``invalid``
call with a readable reason, never an exception."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_questions import at, make_question

from groundeval.runtime import tools as T
from groundeval.runtime.episode import Episode

GOLDEN = Path(__file__).parent / "golden"
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fmt", T.FORMATS)
def test_tools_command_output_is_the_pinned_bytes(fmt):
    """The CLI prints exactly the pinned declarations, under any hash seed (a fresh process each)."""
    for seed in ("0", "1"):
        out = subprocess.run(
            [str(Path(sys.executable).with_name("groundeval")), "tools", "--format", fmt],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=True,
        ).stdout
        assert out == (GOLDEN / f"tools_{fmt}.json").read_bytes()


def test_schemas_come_from_the_models():
    by_name = {t["name"]: t for t in T.mcp_tools()}
    for tool in (*T.EPISODE_TOOLS, *T.SESSION_TOOLS):
        assert T.tool(tool.name) is tool
        generated = tool.args.model_json_schema()
        declared = T.input_schema(tool.args)
        assert list(declared["properties"]) == list(generated["properties"])
        assert declared.get("required", []) == generated.get("required", [])
        assert declared["additionalProperties"] is False
        # what MCP lists is the model's schema (episode tools add the episode id first)
        mcp = by_name[tool.name]["input_schema"]
        assert {
            k: v for k, v in mcp["properties"].items() if k != "episode_id" or tool.args is T.EpisodeArgs
        } == declared["properties"]
    assert T.input_schema(T.SearchArgs)["properties"]["limit"]["maximum"] == T.MAX_LIMIT
    assert T.input_schema(T.SearchArgs)["properties"]["query"]["maxLength"] == T.MAX_QUERY_CHARS


def test_the_models_are_public_for_adapters():
    from groundeval.runtime.tools import FetchArgs, SearchArgs, SubmitArgs

    args = SearchArgs.model_validate({"query": "checkout", "limit": 500})
    assert args.limit == T.MAX_LIMIT and args.subsystem is None  # a larger limit is capped, not refused
    assert SearchArgs.model_validate({"query": "x", "limit": None}).limit == T.DEFAULT_LIMIT
    assert FetchArgs(artifact_id="JIRA-42").artifact_id == "JIRA-42"
    assert SubmitArgs(answer=[1]).answer == [1]  # any JSON: the answer schema judges it, recorded


@pytest.mark.parametrize(
    "tool, arguments, reason",
    [
        ("search_artifacts", {"query": ""}, "query is empty"),
        ("search_artifacts", {"query": "  \t"}, "query is empty"),
        ("search_artifacts", {"query": "x" * 1001}, "query is longer than 1000 characters"),
        ("search_artifacts", {"query": 42}, "query must be a string"),
        ("search_artifacts", {"query": "a\x00b"}, "query contains a NUL character"),
        ("search_artifacts", {"query": "x", "limit": "5"}, "limit must be an integer"),
        ("search_artifacts", {"query": "x", "limit": True}, "limit must be an integer"),
        ("search_artifacts", {"query": "x", "limit": 2.0}, "limit must be an integer"),
        ("search_artifacts", {"query": "x", "limit": 0}, "limit must be at least 1"),
        ("search_artifacts", {"query": "x", "subsystem": 3}, "subsystem must be a string"),
        ("search_artifacts", {"query": 1, "limit": 0}, "query must be a string; limit must be at least 1"),
        ("search_artifacts", {"limit": 3}, "missing argument(s): query"),
        ("search_artifacts", {"query": "x", "zeta": 1, "alpha": 2}, "unexpected argument(s): alpha, zeta"),
        ("fetch_artifact", {"artifact_id": None}, "artifact_id must be a string"),
        ("fetch_artifact", {"artifact_id": " "}, "artifact_id is empty"),
        ("fetch_artifact", {"artifact_id": "A\ud800"}, T.not_unicode(["$.artifact_id"])),
        ("submit_answer", {}, "missing argument(s): answer"),
    ],
)
def test_a_validation_error_is_a_recorded_invalid_call_with_its_reason(tiny_store, tool, arguments, reason):
    with Episode(tiny_store, make_question(actor="alice", as_of=at(9))) as ep:
        reply = ep.call(tool, arguments)
    assert reply == {"status": "invalid", "error": reason}
    (call,) = ep.trace.calls
    assert call.status == "invalid" and call.error == reason and call.tool == tool


def _accepts(schema: dict, value: dict) -> bool:
    return not list(jsonschema.Draft202012Validator(schema).iter_errors(value))


_TEXT = st.one_of(st.text(max_size=8), st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False))
_ARGS = st.fixed_dictionaries({}, optional={"query": _TEXT, "subsystem": _TEXT, "limit": _TEXT, "bogus": _TEXT})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arguments=_ARGS)
def test_the_declared_schema_admits_what_the_model_accepts(arguments):
    """Every argument set the model accepts within the advertised limits is one the declared
    schema accepts, and the schema rejects every set the model rejects for its type or names
    (the model is stricter only on text: blank, NUL)."""
    schema = T.input_schema(T.SearchArgs)
    parsed = T.validate_arguments(T.SearchArgs, arguments)
    in_limits = not isinstance(arguments.get("limit"), int) or arguments["limit"] <= T.MAX_LIMIT
    if (
        not isinstance(parsed, str)
        and arguments.get("subsystem", "") is not None
        and arguments.get("limit", 1) is not None
        and in_limits
    ):
        assert _accepts(schema, arguments)
    if _accepts(schema, arguments) and in_limits:
        assert not isinstance(parsed, str) or any(w in parsed for w in ("empty", "NUL")), parsed
