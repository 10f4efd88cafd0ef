"""A real `groundeval run` process, stopped by real signals, then resumed.

SIGKILL gives the runner no chance to clean up: what finished must already be on
disk, and --resume must finish the rest with every question present exactly once.
SIGINT (Ctrl-C) must stop cleanly, keep finished episodes and say so in run.json.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents_helpers import perspective_questions, write_question_set
from groundeval.scoring.score import score
from groundeval.store.store import Store
from groundeval.trace.io import read_traces

HERE = Path(__file__).resolve().parent
N = 16


@pytest.fixture(scope="module")
def questions_file(tiny_pack, tmp_path_factory):
    store = Store.open(tiny_pack)
    qs = perspective_questions(N, store.digest)
    store.close()
    path = tmp_path_factory.mktemp("q") / "questions.json"
    write_question_set(qs, path)
    return qs, path


def _cmd(questions: Path, pack: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "groundeval.cli.main",
        "run",
        str(questions),
        "--pack",
        str(pack),
        "--agent",
        "agents_slow:make",
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def _env(delay: float) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    env["SLOW_AGENT_DELAY"] = str(delay)
    return env


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _start_and_wait(cmd, env, traces: Path, at_least: int) -> subprocess.Popen:
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while _lines(traces) < at_least:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.02)
    return proc


def test_sigkill_then_resume_scores_every_question_once(questions_file, tiny_pack, tmp_path):
    qs, qpath = questions_file
    out = tmp_path / "run"
    traces_path = out / "traces.jsonl"
    proc = _start_and_wait(_cmd(qpath, tiny_pack, out, "--concurrency", "2"), _env(0.2), traces_path, 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    kept = _lines(traces_path)
    assert 3 <= kept < N
    assert json.loads((out / "run.json").read_text())["status"] == "running"  # nobody could update it

    done = subprocess.run(
        _cmd(qpath, tiny_pack, out, "--resume", "--concurrency", "2"),
        env=_env(0.0),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    traces = read_traces(traces_path)
    assert sorted(t.question_id for t in traces) == sorted(q.id for q in qs.questions)  # each exactly once
    by_id = {q.id: q for q in qs.questions}
    scores = [score(by_id[t.question_id], t) for t in traces]
    assert len(scores) == N and all(s.answered for s in scores)
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "completed" and info["episodes_done"] == N
    assert info["sessions"][-1]["skipped"] >= kept and sum(s["episodes"] for s in info["sessions"]) >= N - kept


@pytest.mark.slow
def test_sigint_stops_cleanly_keeping_finished_episodes(questions_file, tiny_pack, tmp_path):
    qs, qpath = questions_file
    out = tmp_path / "run"
    traces_path = out / "traces.jsonl"
    proc = _start_and_wait(_cmd(qpath, tiny_pack, out), _env(0.5), traces_path, 2)  # slow: room for the signal
    proc.send_signal(signal.SIGINT)
    _stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert b"--resume" in stderr and b"Traceback" not in stderr
    traces = read_traces(traces_path)  # every line is a whole trace
    assert 2 <= len(traces) < N and len({t.question_id for t in traces}) == len(traces)
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "interrupted" and info["episodes_done"] == len(traces)
