"""Failures on the Ray backend are what they are locally: an agent's exception is recorded in its
trace (same bytes), a fatal provider error stops the run with the same message, a worker that
dies mid-episode costs that episode only (an errored trace; the run goes on), an agent that
cannot be pickled is refused before anything runs, and bad trace lines are the same located error."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from ray_agents import CrashOn, Unpicklable
from test_ray_identity import cli, no_timings

from groundeval import api
from groundeval.errors import UsageError
from groundeval.trace.io import read_traces


def test_agent_exceptions_are_recorded_as_locally(ray_backend, tmp_path):
    local = api.run("tiny", "ray_agents:boom", tmp_path / "local")
    remote = api.run("tiny", "ray_agents:boom", tmp_path / "ray", backend=ray_backend)
    assert no_timings(remote) == no_timings(local)
    errored = [t for t in read_traces(remote) if t.status == "error"]
    assert errored and any("ValueError: boom on" in json.dumps(t.messages) for t in errored)


def test_fatal_provider_error_stops_the_run_as_locally(ray_backend, tmp_path):
    with pytest.raises(UsageError) as local:
        api.run("tiny", "ray_agents:fatal", tmp_path / "local")
    with pytest.raises(UsageError) as remote:
        api.run("tiny", "ray_agents:fatal", tmp_path / "ray", backend=ray_backend)
    assert str(remote.value) == str(local.value)
    assert "the run stopped: 401 from the provider" in str(remote.value)
    info = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert info["status"] == "aborted"


def test_a_worker_dying_costs_one_episode(ray_backend, tmp_path):
    oracle = api.run("tiny", "oracle", tmp_path / "oracle")
    ids = [t.question_id for t in read_traces(oracle)]
    doomed = [ids[3], ids[11]]
    path = api.run("tiny", CrashOn(doomed), tmp_path / "ray", backend=ray_backend)
    traces = read_traces(path)
    assert [t.question_id for t in traces] == ids  # every question, in question order
    by_id = {t.question_id: t for t in traces}
    for qid in doomed:
        t = by_id[qid]
        assert t.status == "error" and t.final_answer is None
        assert "the Ray worker died" in t.messages[-1]["error"]
    want = {json.loads(x)["question_id"]: x for x in no_timings(oracle)}
    for x in no_timings(path):
        qid = json.loads(x)["question_id"]
        if qid not in doomed:
            assert x == want[qid].replace('"agent":"oracle"', '"agent":"crash-on"')
    info = json.loads((path.parent / "run.json").read_text())
    assert info["status"] == "completed" and info["by_status"] == {"completed": len(ids) - 2, "error": 2}
    scores = api.score(api.load_questions(path.parent / "questions.json"), traces)
    assert {s.question_id for s in scores if not s.answered} == set(doomed)


def test_unpicklable_agent_is_refused_before_running(ray_backend, tmp_path):
    with pytest.raises(UsageError, match="agent 'unpicklable' cannot be sent to Ray workers .*lock.*give it by name"):
        api.run("tiny", Unpicklable(), tmp_path / "ray", backend=ray_backend)
    assert not (tmp_path / "ray" / "traces.jsonl").exists()


def test_bad_trace_lines_are_the_same_located_error(ray_backend, tmp_path, capsys):
    path = api.run("tiny", "keyword", tmp_path / "run")
    lines = path.read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines[:5] + ['{"question_id": 3}\n'] + lines[5:] + [lines[2]]))
    dup = tmp_path / "dup.jsonl"
    dup.write_text("".join(lines + [lines[2]]))
    for traces in (bad, dup, tmp_path / "missing.jsonl"):
        errs = []
        for backend in ("local", "ray"):
            code, _out, err = cli(
                capsys,
                "score",
                traces,
                "--questions",
                path.parent / "questions.json",
                "--out",
                tmp_path / f"o-{backend}",
                "--backend",
                backend,
            )
            assert code == 2 and "Traceback" not in err
            errs.append(err)
        assert errs[0] == errs[1] and f"{traces}" in errs[0]


def test_an_unreachable_cluster_is_refused_in_seconds(tmp_path):
    """Ray itself retries an address nothing listens on for minutes; groundeval says so at once."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "t.jsonl").write_text("")
    for how in (["--ray-address", f"127.0.0.1:{port}"], []):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "groundeval.cli.main",
                "run",
                "tiny",
                "--agent",
                "oracle",
                "--out",
                str(tmp_path / "o"),
                "--backend",
                "ray",
                *how,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "RAY_ADDRESS": f"127.0.0.1:{port}"},
        )
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"--ray-address: cannot reach Ray at 127.0.0.1:{port}" in proc.stderr
