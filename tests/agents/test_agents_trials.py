"""Issue 19: repeated trials — each question run K times, every trace kept with its trial
index (identity: question, agent, mode, trial), seeds per trial, and ``--resume`` after a
SIGKILL scoring every (question, trial) exactly once."""

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
from agents_trials import CoinAgent
from groundeval.agents.runner import run_questions
from groundeval.errors import ContractError
from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.profiles import score
from groundeval.store.store import Store
from groundeval.trace.io import read_traces, trace_line

HERE = Path(__file__).resolve().parent
N, K = 8, 3


@pytest.fixture(scope="module")
def store(tiny_pack):
    s = Store.open(tiny_pack)
    yield s
    s.close()


def _strip(t):
    d = t.model_dump(mode="json")
    d.pop("timings")
    return d


def test_trials_run_each_question_k_times_with_per_trial_seeds(store, tmp_path):
    qs = perspective_questions(4, store.digest)
    agent = CoinAgent(0.5)
    path = run_questions(store, qs, agent, out_dir=tmp_path / "a", trials=K, concurrency=2)
    traces = read_traces(path)  # the duplicate rule holds: one trace per (question, agent, mode, trial)
    assert [(t.question_id, t.trial) for t in traces] == [(q.id, k) for q in qs.questions for k in range(K)]
    assert sorted(agent.seeds) == sorted((q.id, k, k) for q in qs.questions for k in range(K))
    # seeded trials are reproducible: a second run writes the same traces
    again = read_traces(run_questions(store, qs, CoinAgent(0.5), out_dir=tmp_path / "b", trials=K))
    assert [_strip(t) for t in again] == [_strip(t) for t in traces]
    # trial 0 is written as before (no "trial" key); later trials carry theirs
    assert '"trial"' not in trace_line(traces[0]) and '"trial":1' in trace_line(traces[1])
    info = json.loads((tmp_path / "a" / "run.json").read_text())
    assert info["episodes_total"] == 4 * K and info["episodes_done"] == 4 * K and info["settings"]["trials"] == K


def test_single_trial_run_has_no_seed_and_no_trial_key(store, tmp_path):
    qs = perspective_questions(2, store.digest)
    agent = CoinAgent(1.0)
    path = run_questions(store, qs, agent, out_dir=tmp_path)
    assert [s[2] for s in agent.seeds] == [None, None]
    assert all('"trial"' not in line for line in path.read_text().splitlines())
    info = json.loads((tmp_path / "run.json").read_text())
    assert "trials" not in info["settings"]


def test_trials_report_pass_at_k_and_pass_hat_k(store, tmp_path):
    qs = perspective_questions(6, store.digest)
    traces = read_traces(run_questions(store, qs, CoinAgent(0.5), out_dir=tmp_path, trials=K))
    by_id = {q.id: q for q in qs.questions}
    scores = [score(by_id[t.question_id], t) for t in traces]
    assert sorted((s.question_id, s.trial) for s in scores) == sorted((t.question_id, t.trial) for t in traces)
    report = aggregate(qs.questions, traces, scores, bootstrap_samples=200)
    tr = report.trials
    assert tr is not None and tr.trials == K and tr.k == K and len(tr.questions) == 6
    for row in tr.questions:
        assert row.n == K
        assert row.pass_hat_k == (1.0 if row.valid == K else 0.0)  # k = n: all K trials valid
        assert row.pass_at_k == (1.0 if row.valid else 0.0)  # k = n: at least one valid
    assert tr.overall.pass_hat_k[str(K)] <= tr.overall.pass_at_k[str(K)]
    lo, hi = tr.overall.ci95["mean_s_adj"]
    assert lo <= tr.overall.mean_s_adj <= hi
    assert report.missing_question_ids == []
    # a resumed or re-scored run of the same traces gives the same report
    again = aggregate(qs.questions, list(reversed(traces)), list(reversed(scores)), bootstrap_samples=200)
    assert again.model_dump_json() == report.model_dump_json()


def test_resume_with_trials_refuses_a_duplicated_trial(store, tmp_path):
    qs = perspective_questions(2, store.digest)
    path = run_questions(store, qs, CoinAgent(1.0), out_dir=tmp_path, trials=2)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[1]]) + "\n")
    with pytest.raises(ContractError, match="trial 1"):
        run_questions(store, qs, CoinAgent(1.0), out_dir=tmp_path, trials=2, resume=True)


# ----------------------------------------------------------------------------- a real process, SIGKILLed


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
        "agents_trials:make",
        "--out",
        str(out),
        "--quiet",
        "--trials",
        str(K),
        *extra,
    ]


def _env(delay: float) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    env["SLOW_AGENT_DELAY"] = str(delay)
    return env


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.slow
def test_sigkill_then_resume_scores_every_question_and_trial_once(tiny_pack, tmp_path):
    store = Store.open(tiny_pack)
    qs = perspective_questions(N, store.digest)
    store.close()
    qpath = tmp_path / "questions.json"
    write_question_set(qs, qpath)
    out = tmp_path / "run"
    traces_path = out / "traces.jsonl"
    proc = subprocess.Popen(
        _cmd(qpath, tiny_pack, out, "--concurrency", "2"),
        env=_env(0.15),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while _lines(traces_path) < 5:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    kept = _lines(traces_path)
    assert 5 <= kept < N * K

    done = subprocess.run(
        _cmd(qpath, tiny_pack, out, "--resume", "--concurrency", "2"),
        env=_env(0.0),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    traces = read_traces(traces_path)
    keys = [(t.question_id, t.trial) for t in traces]
    assert sorted(keys) == sorted((q.id, k) for q in qs.questions for k in range(K))  # each exactly once
    by_id = {q.id: q for q in qs.questions}
    scores = [score(by_id[t.question_id], t) for t in traces]
    assert len(scores) == N * K and all(s.answered for s in scores)
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "completed" and info["episodes_done"] == N * K and info["episodes_total"] == N * K
    assert info["sessions"][-1]["skipped"] >= kept

    # and `groundeval score` re-scores them, with the trials section in the report
    rescored = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundeval.cli.main",
            "score",
            str(traces_path),
            "--questions",
            str(qpath),
            "--out",
            str(tmp_path / "scored"),
            "--bootstrap",
            "50",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rescored.returncode == 0, rescored.stderr
    assert f"{K} trials per question ({N * K} traces)" in rescored.stdout
    report = json.loads((tmp_path / "scored" / "report.json").read_text())
    assert report["trials"]["k"] == K and len(report["trials"]["questions"]) == N
    assert "Repeated trials" in (tmp_path / "scored" / "report.md").read_text()


def test_resume_keeps_the_runs_trials_without_repeating_the_option(store, tmp_path):
    qs = perspective_questions(2, store.digest)
    path = run_questions(store, qs, CoinAgent(1.0), out_dir=tmp_path, trials=3)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3]) + "\n")  # a run killed after three episodes
    agent = CoinAgent(1.0)
    run_questions(store, qs, agent, out_dir=tmp_path, resume=True)  # no trials given: the run's 3
    assert sorted((t.question_id, t.trial) for t in read_traces(path)) == sorted(
        (q.id, k) for q in qs.questions for k in range(3)
    )
    assert len(agent.seeds) == 3
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["episodes_total"] == 6 and info["episodes_done"] == 6 and info["sessions"][-1]["skipped"] == 3
