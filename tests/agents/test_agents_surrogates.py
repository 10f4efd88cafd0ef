"""Issue 13, item 1: a provider that returns lone surrogates cannot end a run.

A real local OpenAI-compatible server (scripted) answers with ``\\ud800``-style
escapes in the tool-call arguments, in the tool name and in the message text; a real
``groundeval run`` process must finish, write every trace (escaped, recorded as
invalid calls) and ``--resume`` must complete what a kill left undone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agents_helpers import perspective_questions, write_question_set
from groundeval.agents.runinfo import read_run_info
from groundeval.store.store import Store
from groundeval.trace.io import read_traces
from groundeval.trace.text import unescape

N = 3


def _reply(calls: list[tuple[str, str]], content: str | None) -> tuple[int, dict, dict]:
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(calls)
    ]
    msg = {"role": "assistant", "content": content, "tool_calls": tool_calls}
    return (
        200,
        {},
        {
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        },
    )


def _episode_script() -> list:
    # json.dumps writes a lone surrogate as the JSON escape \ud800, as such servers do
    bad_args = json.dumps({"artifact_id": "PM-42\ud800"})
    return [
        _reply(
            [("fetch_artifact", bad_args), ("search_\udc00artifacts", json.dumps({"query": "x"}))],
            "thinking \ud800 about it",
        ),
        _reply([("search_artifacts", json.dumps({"query": "INC-42 \udfff"}))], None),
        _reply(
            [
                (
                    "submit_answer",
                    json.dumps({"answer": {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}}),
                )
            ],
            "done \ud801",
        ),
    ]


def _run(questions: Path, pack: Path, out: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "groundeval.cli.main",
        "run",
        str(questions),
        "--pack",
        str(pack),
        "--agent",
        "openai:local-model",
        "--base-url",
        url + "/v1",
        "--retries",
        "0",
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "OPENAI_API_KEY": "k"})


def test_lone_surrogates_from_a_provider_through_run_and_resume(scripted_server, tiny_pack, tmp_path):
    store = Store.open(tiny_pack)
    qs = perspective_questions(N, store.digest)
    store.close()
    questions = tmp_path / "questions.json"
    write_question_set(qs, questions)
    out = tmp_path / "run"
    for _ in range(N):
        scripted_server.add(*_episode_script())

    done = _run(questions, tiny_pack, out, scripted_server.url)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    traces = read_traces(out / "traces.jsonl")
    assert [t.question_id for t in traces] == [q.id for q in qs.questions]
    assert read_run_info(out / "run.json").status == "completed"
    for t in traces:
        assert t.status == "completed"
        assert [c.status for c in t.calls] == ["invalid", "invalid", "invalid", "ok"]
        assert unescape(t.calls[0].arguments["artifact_id"]) == "PM-42\ud800"
        assert t.calls[1].tool == "search_\\udc00artifacts"
        assert unescape(t.calls[2].arguments["query"]) == "INC-42 \udfff"
        assert t.messages[0]["content"] == "thinking \\ud800 about it"
    # the provider saw every request (its own surrogates sent back as JSON escapes, never a client crash)
    assert len(scripted_server.requests) == 3 * N

    # a kill before the last episode was written: drop it, resume, and every question is there once
    lines = (out / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    (out / "traces.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    scripted_server.add(*_episode_script())
    resumed = _run(questions, tiny_pack, out, scripted_server.url, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    again = read_traces(out / "traces.jsonl")
    assert [t.question_id for t in again] == [q.id for q in qs.questions]
    assert again[-1].status == "completed" and again[-1].calls[0].status == "invalid"
    info = read_run_info(out / "run.json")
    assert info.status == "completed" and info.episodes_done == N
