"""The framework sections of docs/integration.md run, each in a fresh interpreter of this venv,
against the scripted local server (``OPENAI_BASE_URL``); the trace each prints scores as the
same calls through the Python API. The model first calls a tool it was not given and sends
arguments that are not JSON: the page's plain route records both as the Python API does
(issue 30 item 8). (The page's other blocks run in tests/docs; these are marked not-run there
because the main venv has no frameworks.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import need
from framework_scenarios import Scenario
from llm_server import LLMServer, say

import groundeval
from groundeval.runtime.episode import Episode

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "docs"))
from docs_blocks import blocks  # noqa: E402

PAGE = REPO / "docs" / "integration.md"
HERE = "tests/extras/frameworks/test_docs_frameworks.py"
MODULES = {
    "openai-agents": "agents",
    "langgraph": "langgraph",
    "crewai": "crewai",
    "agent-framework": "agent_framework",
    "pydantic-ai": "pydantic_ai",
}


def _framework_blocks() -> dict[str, str]:
    out = {}
    for block in blocks(PAGE):
        if block.directive == "not-run" and HERE in block.argument:
            extra = re.search(r"groundeval\[([\w-]+)\]", block.argument)
            assert extra and block.lang == "python", f"{block.where}: name the extra, a python block"
            out[extra.group(1)] = block.code
    return out


BLOCKS = _framework_blocks()


def test_one_section_per_framework():
    assert sorted(BLOCKS) == sorted(MODULES)


UNKNOWN = ("lookup_owner", {"team": "storage"})
UNPARSABLE = ("fetch_artifact", '{"artifact_id": "PM-4')


def _scenario(questions) -> Scenario:
    """What the model does for the page's question (the first Silence question): a call to a tool
    it does not have, arguments that are not JSON, then what a careful model does."""
    q = next(q for q in questions.questions if q.track == "silence")
    space = list(q.ground_truth.expected_search_space)
    calls: list[tuple[str, Any]] = [UNKNOWN, UNPARSABLE, ("search_artifacts", {"query": "postmortem", "limit": 10})]
    calls += [("fetch_artifact", {"artifact_id": a}) for a in space]
    calls += [("submit_answer", {"answer": {"exists": q.ground_truth.exists, "evidence_artifacts": space}})]
    return Scenario(q, calls, ["invalid", "invalid"] + ["ok"] * (len(calls) - 2))


def _direct(store, scenario: Scenario):
    """The same calls through the Python API (``Episode.call``, arguments as sent)."""
    with Episode(store, scenario.question, agent="direct") as ep:
        for name, arguments in scenario.calls:
            ep.call(name, arguments)
    return ep.trace


def _script(extra: str, scenario: Scenario):
    if extra != "crewai":
        return scenario.script("Done.")
    # CrewAI picks tools by text
    return [
        say(f"Thought: next.\nAction: {name}\nAction Input: {args if isinstance(args, str) else json.dumps(args)}")
        for name, args in scenario.calls
    ] + [say("Thought: I now know the final answer\nFinal Answer: Done.")]


@pytest.mark.parametrize("extra", sorted(MODULES))
def test_framework_section_runs(extra, store, questions, tmp_path):
    need(MODULES[extra], extra)
    scenario = _scenario(questions)
    direct = _direct(store, scenario)
    assert [c.status for c in direct.calls] == scenario.statuses
    expected = groundeval.score(questions, [direct])[0].s_adj
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    script = tmp_path / "example.py"
    script.write_text(BLOCKS[extra], encoding="utf-8")
    with LLMServer(_script(extra, scenario)) as srv:
        env.update(OPENAI_BASE_URL=srv.base_url, OPENAI_API_KEY="sk-local-test", PYTHONHASHSEED="0")
        proc = subprocess.run(
            [sys.executable, script.name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not srv.llm.exhausted
    lines = proc.stdout.strip().splitlines()
    assert lines[-2] == f"completed {scenario.statuses}"
    assert lines[-1] == f"score {expected}"
