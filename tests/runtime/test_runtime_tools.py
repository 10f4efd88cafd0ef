"""Tool declarations for OpenAI, Anthropic and MCP, and the ``tools`` command."""

from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from groundeval.cli.runtime import tools
from groundeval.runtime.tools import tool_specs

NAMES = ["search_artifacts", "fetch_artifact", "submit_answer"]


def test_runtime_openai_and_anthropic_specs():
    openai = tool_specs("openai")
    anthropic = tool_specs("anthropic")
    assert [t["function"]["name"] for t in openai] == NAMES and all(t["type"] == "function" for t in openai)
    assert [t["name"] for t in anthropic] == NAMES
    for o, a in zip(openai, anthropic):
        assert o["function"]["parameters"] == a["input_schema"]
        jsonschema.Draft202012Validator.check_schema(a["input_schema"])
    search = anthropic[0]["input_schema"]
    assert search["properties"]["limit"]["maximum"] == 20 and search["required"] == ["query"]


def test_runtime_specs_embed_answer_schema():
    schema = {"type": "object", "properties": {"exists": {"type": "boolean"}}, "required": ["exists"]}
    submit = tool_specs("anthropic", answer_schema=schema)[2]
    assert submit["input_schema"]["properties"]["answer"] == schema
    assert tool_specs("anthropic")[2]["input_schema"]["properties"]["answer"] == {
        "type": "object",
        "description": "The answer object.",
    }


def test_runtime_mcp_specs_name_the_episode():
    mcp = {t["name"]: t for t in tool_specs("mcp")}
    assert {"list_questions", "start_episode", "get_context", "end_episode", *NAMES} == set(mcp)
    for name in NAMES:
        assert mcp[name]["inputSchema"]["required"][0] == "episode_id"
    with pytest.raises(ValueError):
        tool_specs("cohere")


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_runtime_tools_command(fmt):
    result = CliRunner().invoke(tools, ["--format", fmt])
    assert result.exit_code == 0
    assert json.loads(result.output) == json.loads(json.dumps(tool_specs(fmt), sort_keys=True))


def test_runtime_tools_command_rejects_unknown_format():
    assert CliRunner().invoke(tools, ["--format", "xml"]).exit_code == 2
