"""A full ``verifiers`` rollout of the groundeval environment: a real local OpenAI-compatible
HTTP server plays a scripted policy (the oracle's calls, then a wrong-path script), the
rollout goes through verifiers' interception endpoint, its MCP tool server (the gated
runtime, a subprocess) and its scoring; the rewards equal ``groundeval score`` on the
trace the tool server recorded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

vf = pytest.importorskip(
    "verifiers.v1",
    reason="verifiers is not installed: bash .ci/extras/verifiers.sh (a venv "
    "of its own: verifiers 0.4 pins mcp==2.0.0, groundeval's mcp/dev extras need mcp>=2.3)",
)

from verifiers_rollout import rollout, scripts, tasks  # noqa: E402 - after the skip

from groundeval.rl.reward import reward  # noqa: E402
from groundeval.trace.model import Trace  # noqa: E402


@pytest.mark.slow  # two full rollouts (a tool server subprocess each) and a CLI run: ~16 s
def test_a_full_rollout_earns_the_scorers_numbers(tiny_questions, monkeypatch, tmp_path):
    from groundeval.questions.io import write_questions

    store, qs = tiny_questions
    by_id = tasks()
    assert list(by_id) == [q.id for q in qs.questions]
    write_questions(qs, tmp_path / "questions.json")
    for q, name, calls, reference in scripts(store, qs):
        episode, model = rollout(by_id[q.id], calls, monkeypatch)
        assert not episode.errors, episode.errors
        offered = sorted(t["function"]["name"] for t in model.requests[0]["tools"])
        assert offered == ["fetch_artifact", "search_artifacts", "submit_answer"]
        assert q.text in model.requests[0]["messages"][-1]["content"]
        (trace,) = episode.traces
        recorded = Trace.model_validate(trace.state.ge_trace)
        assert [(c.tool, c.arguments, c.status, c.flags) for c in recorded.calls] == [
            (c.tool, c.arguments, c.status, c.flags) for c in reference.calls
        ], name
        # the metrics are the numbers `groundeval score` writes for this very trace
        traces = tmp_path / f"{name}.jsonl"
        traces.write_text(recorded.model_dump_json() + "\n")
        out = tmp_path / name
        subprocess.run(
            [
                sys.executable,
                "-m",
                "groundeval.cli.main",
                "score",
                str(traces),
                "-q",
                str(tmp_path / "questions.json"),
                "--pack",
                "tiny",
                "--out",
                str(out),
            ],
            check=True,
            capture_output=True,
        )
        scored = json.loads((out / "scores.jsonl").read_text().splitlines()[0])
        if name == "leaky":
            assert 0.0 < scored["s_adj"] < 1.0 and scored["violation_rate"] > 0
        for key in ("s_adj", "s_answer", "s_traj", "s_combined", "penalty", "violation_rate"):
            assert trace.metrics[key] == scored[key], (name, key)
        for k, v in scored["answer_components"].items():
            assert trace.metrics[f"answer.{k}"] == v, (name, k)
        for k, v in scored["traj_components"].items():
            assert trace.metrics[f"traj.{k}"] == v, (name, k)
        # the one weighted reward is the RL reward of that trace: S_adj on the oracle's clean
        # path, never above it on the leaky path's flagged one
        rl = reward(q, recorded, config=store.manifest.evaluation.scoring)
        assert list(trace.rewards) == ["rl_reward"] and trace.rewards["rl_reward"].weight == 1.0
        assert trace.rewards["rl_reward"].score == rl == trace.reward, name
        assert (rl == scored["s_adj"]) if name == "oracle" else (rl <= scored["s_adj"]), (name, rl, scored["s_adj"])
