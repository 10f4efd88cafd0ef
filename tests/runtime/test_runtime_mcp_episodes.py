"""One trace per (question, trial) from the MCP server, through the real MCP client: every
start_episode is a new episode with an id of its own (never one already open, not even for
the same caller), each trace gets the next trial of its question when it is written, and a
server restarted on the same traces file continues the trials — so the traces file is
always one ``groundeval score`` accepts."""

from __future__ import annotations

import sys

import anyio
from mcp import Client, StdioServerParameters
from runtime_mcp_helpers import write_questions
from runtime_questions import at, make_question

from groundeval.scoring.io import iter_rescore
from groundeval.trace.io import read_traces

QUESTIONS = [make_question(actor="dave", as_of=at(5), qid="q-dave")]
ANSWER = {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}


def _params(tiny_pack, questions, traces):
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "groundeval.cli.main",
            "serve",
            str(tiny_pack),
            "--questions",
            str(questions),
            "--traces",
            str(traces),
        ],
    )


async def _start(client, **extra):
    result = await client.call_tool("start_episode", {"question_id": "q-dave", "agent": "twice", **extra})
    assert not result.is_error, result.structured_content
    return result.structured_content


def test_every_start_is_a_new_episode_and_trials_continue_across_restarts(tiny_pack, tiny_store, tmp_path):
    traces = tmp_path / "traces.jsonl"
    questions = write_questions(tmp_path / "questions.json", QUESTIONS, tiny_store.digest)

    async def first_server():
        async with Client(_params(tiny_pack, questions, traces)) as client:
            one = await _start(client)
            again = await _start(client)  # the same caller, question, agent and mode: still a new episode
            assert again["episode_id"] != one["episode_id"]
            assert {k: v for k, v in again.items() if k != "episode_id"} == {
                k: v for k, v in one.items() if k != "episode_id"
            }
            await client.call_tool("search_artifacts", {"episode_id": one["episode_id"], "query": "checkout"})
            await client.call_tool("fetch_artifact", {"episode_id": again["episode_id"], "artifact_id": "JIRA-42"})
            done = await client.call_tool("submit_answer", {"episode_id": again["episode_id"], "answer": ANSWER})
            assert not done.is_error
            other_mode = await _start(client, mode="context")
            await client.call_tool("end_episode", {"episode_id": other_mode["episode_id"]})
            await client.call_tool("end_episode", {"episode_id": one["episode_id"]})

    async def second_server():  # a restart appends to the same file: the trials continue
        async with Client(_params(tiny_pack, questions, traces)) as client:
            third = await _start(client)
            await client.call_tool("submit_answer", {"episode_id": third["episode_id"], "answer": ANSWER})

    anyio.run(first_server)
    written = read_traces(traces)
    # numbered in the order they were written: one per (question, trial)
    assert [(t.mode, t.trial, t.status, [c.tool for c in t.calls]) for t in written] == [
        ("tool", 0, "completed", ["fetch_artifact", "submit_answer"]),
        ("context", 1, "no_answer", []),
        ("tool", 2, "no_answer", ["search_artifacts"]),
    ]
    anyio.run(second_server)
    written = read_traces(traces)
    assert [t.trial for t in written] == [0, 1, 2, 3] and written[3].status == "completed"
    # scoring reads the file without a "second trace of question" error
    scored = list(iter_rescore(traces, {q.id: q for q in QUESTIONS}, contract_digest=tiny_store.digest))
    assert len(scored) == 4 and all(s is not None for _, s in scored)


def test_start_episode_arguments_are_checked_by_their_model(tiny_pack, tiny_store, tmp_path):
    traces = tmp_path / "traces.jsonl"
    questions = write_questions(tmp_path / "questions.json", QUESTIONS, tiny_store.digest)

    async def main():
        async with Client(_params(tiny_pack, questions, traces)) as client:
            out = {}
            for name, args in [
                ("mode", {"question_id": "q-dave", "mode": "psychic"}),
                ("agent", {"question_id": "q-dave", "agent": 7}),
                ("extra", {"question_id": "q-dave", "colour": "red"}),
                ("missing", {}),
                ("unknown", {"question_id": "q-nope"}),
            ]:
                result = await client.call_tool("start_episode", args)
                assert result.is_error
                out[name] = result.structured_content["error"]
            return out

    errors = anyio.run(main)
    assert errors == {
        "mode": "mode must be one of 'tool', 'context' or 'zero-shot'",
        "agent": "agent must be a string",
        "extra": "unexpected argument(s): colour",
        "missing": "missing argument(s): question_id",
        "unknown": "unknown question_id; call list_questions",
    }
    assert not traces.exists() or read_traces(traces) == []
