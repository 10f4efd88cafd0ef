"""The world examples of docs/integration.md ("Worlds") run, each in a fresh interpreter of this
venv, against the scripted local server (``OPENAI_BASE_URL``): a model that calls a tool the
world does not have, then a world tool with arguments that are not JSON, and then says it is
done; each prints the episode the same steps leave through the Python API (the examples are
the plain route, with nothing to opt into for recording)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import need
from llm_server import LLMServer, call, say

from groundeval.worlds import find_world, load_world
from groundeval.worlds.episode import WorldEpisode
from groundeval.worlds.verdict import verdict

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "docs"))
from docs_blocks import blocks  # noqa: E402

PAGE = REPO / "docs" / "integration.md"
HERE = "tests/extras/frameworks/test_docs_worlds.py"
MODULES = {
    "openai-agents": "agents",
    "langgraph": "langgraph",
    "crewai": "crewai",
    "agent-framework": "agent_framework",
    "pydantic-ai": "pydantic_ai",
}
UNKNOWN = ("lookup_everything", {"query": "my order"})
UNPARSABLE = ("get_order", '{"order_id": "O-10')
FINAL = "Is there anything else I can help with?"


def _blocks() -> dict[str, str]:
    out = {}
    for block in blocks(PAGE):
        if block.directive == "not-run" and HERE in block.argument:
            extra = re.search(r"groundeval\[([\w-]+)\]", block.argument)
            assert extra and block.lang == "python", f"{block.where}: name the extra, a python block"
            out[extra.group(1)] = block.code
    return out


BLOCKS = _blocks()


def test_one_world_example_per_framework():
    assert sorted(BLOCKS) == sorted(MODULES)


def _expected() -> str:
    world = load_world(find_world("support_desk"))
    task = world.tasks[0]
    ep = WorldEpisode(world, task, agent="direct")
    ep.call(*UNKNOWN)
    ep.call(*UNPARSABLE)
    ep.say(FINAL)
    trace = ep.finish()
    return f"{trace.ended_by} {[(c.tool, c.status) for c in trace.calls]} {verdict(world, task, trace).failure_class}"


@pytest.mark.slow
@pytest.mark.parametrize("extra", sorted(MODULES))
def test_world_example_runs(extra, tmp_path):
    need(MODULES[extra], extra)
    import json

    if extra == "crewai":
        script = [
            say(f"Thought: next.\nAction: {UNKNOWN[0]}\nAction Input: {json.dumps(UNKNOWN[1])}"),
            say(f"Thought: next.\nAction: {UNPARSABLE[0]}\nAction Input: {UNPARSABLE[1]}"),
            say(f"Thought: I now know the final answer\nFinal Answer: {FINAL}"),
        ]
    else:
        script = [call(*UNKNOWN), call(*UNPARSABLE), say(FINAL)]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    example = tmp_path / "example.py"
    example.write_text(BLOCKS[extra], encoding="utf-8")
    with LLMServer(script) as srv:
        env.update(OPENAI_BASE_URL=srv.base_url, OPENAI_API_KEY="sk-local-test", PYTHONHASHSEED="0")
        proc = subprocess.run(
            [sys.executable, example.name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not srv.llm.exhausted
    assert proc.stdout.strip().splitlines()[-1] == _expected()
