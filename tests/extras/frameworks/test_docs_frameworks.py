"""The framework sections of docs/integration.md run, each in a fresh interpreter of this venv,
against the scripted local server (``OPENAI_BASE_URL``); the trace each prints scores as the
same calls through the Python API. (The page's other blocks run in tests/docs; these are
marked not-run there because the main venv has no frameworks.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import need
from framework_scenarios import Scenario, direct_trace
from llm_server import LLMServer, say

import groundeval

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


def _scenario(questions) -> Scenario:
    """What a careful model does for the page's question (the first Silence question)."""
    q = next(q for q in questions.questions if q.track == "silence")
    space = list(q.ground_truth.expected_search_space)
    calls = [("search_artifacts", {"query": "postmortem", "limit": 10})]
    calls += [("fetch_artifact", {"artifact_id": a}) for a in space]
    calls += [("submit_answer", {"answer": {"exists": q.ground_truth.exists, "evidence_artifacts": space}})]
    return Scenario(q, calls, ["ok"] * len(calls))


def _script(extra: str, scenario: Scenario):
    if extra != "crewai":
        return scenario.script("Done.")
    # CrewAI picks tools by text
    return [
        say(f"Thought: next.\nAction: {name}\nAction Input: {json.dumps(args)}") for name, args in scenario.calls
    ] + [say("Thought: I now know the final answer\nFinal Answer: Done.")]


@pytest.mark.parametrize("extra", sorted(MODULES))
def test_framework_section_runs(extra, store, questions, tmp_path):
    need(MODULES[extra], extra)
    scenario = _scenario(questions)
    expected = groundeval.score(questions, [direct_trace(store, scenario)])[0].s_adj
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
    assert lines[-2] == f"completed {[c[0] and 'ok' for c in scenario.calls]}"
    assert lines[-1] == f"score {expected}"
