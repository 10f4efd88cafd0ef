"""τ² worlds on the Ray backend give the local backend's bytes: a ``tau2:mock`` world run
(``traces.jsonl``, ``verdicts.jsonl``, the reports), ``groundeval trajectories verify`` of a τ²
results file made by τ²'s own environment, and the same with ``--judge`` against the real local
judge server (each worker unpickles the judge and asks the server itself); a judge whose key is
refused stops the Ray run with the local message. One local Ray instance (2 workers) serves the
module. Needs both extras (``.ci/extras/tau2.sh`` installs ``.[dev,tau2,ray]``)."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

if os.environ.get("GROUNDEVAL_REQUIRE_EXTRAS") != "1":  # in the extra's own step a missing Ray is an error
    pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[dev,tau2,ray]'")
pytest.importorskip("httpx")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "trajectories"))

from judge_server import JudgeServer  # noqa: E402
from test_tau2_judge import MODEL, distinct_prompts  # noqa: E402
from test_tau2_verify import graded_simulations, lines, run_cli  # noqa: E402

pytestmark = pytest.mark.slow  # 7-15 s each (Ray workers importing τ²); the tau2 step runs them (-m "")

WORKERS = 2
RUN_OUTPUTS = ("traces.jsonl", "verdicts.jsonl", "report.json", "report.md", "report.html")
VERIFY_OUTPUTS = ("kept.jsonl", "rejected.jsonl", "disagreements.jsonl", "summary.json", "report.md")


def outputs(out: Path, names: tuple[str, ...]) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in names}


@pytest.fixture(scope="module")
def ray_backend():
    """A local Ray instance with 2 workers for this module (as tests/extras/ray's fixture), closed after."""
    import ray  # noqa: F401 - with GROUNDEVAL_REQUIRE_EXTRAS=1 a missing Ray fails here, never skips

    from groundeval.distributed import get_backend

    os.environ.pop("RAY_ADDRESS", None)
    backend = get_backend("ray", workers=WORKERS)
    assert backend.workers == WORKERS  # starts Ray
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def mock():
    from groundeval.worlds.tau2 import load_tau2_world

    return load_tau2_world("mock")


@pytest.fixture(scope="module")
def results(mock, tmp_path_factory) -> tuple[Path, Path, list[dict]]:
    """(a τ² results file of the mock domain, its labels, its simulations): every task's gold run and
    perturbations made and graded by τ²'s own environment, one gold run's first tool output
    falsified; the labels are τ²'s rewards (so the falsified run is a disagreement)."""
    sims = graded_simulations(mock)
    target = next(s for s in sims if s["id"].endswith("/gold") and any(m["role"] == "tool" for m in s["messages"]))
    k = next(i for i, m in enumerate(target["messages"]) if m["role"] == "tool")
    body = json.loads(target["messages"][k]["content"])
    body[sorted(body)[0]] = "fabricated"
    target["messages"][k]["content"] = json.dumps(body)
    tmp = tmp_path_factory.mktemp("tau2-ray")
    f = tmp / "results.json"
    f.write_text(json.dumps({"info": {"domain": "mock"}, "tasks": [], "simulations": sims}), encoding="utf-8")
    labels = tmp / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": s["id"], "reward": s["reward_info"]["reward"]}) + "\n" for s in sims))
    return f, labels, sims


def verify(capsys, f: Path, labels: Path, out: Path, *extra) -> tuple[int, str]:
    return run_cli(
        capsys, "trajectories", "verify", str(f), "-w", "tau2:mock", "--labels", str(labels), "-o", str(out), *extra
    )


def test_tau2_world_run_gives_the_local_bytes(ray_backend, mock, tmp_path):
    """``wrong-arg`` on every mock task, two trials, two episodes at once per worker: the driver's
    τ² world (an object) goes to the workers as ``tau2:mock``, each loads τ²'s own domain."""
    from groundeval.worlds.run import run_world

    local = run_world("tau2:mock", "wrong-arg", tmp_path / "local", trials=2, concurrency=2)
    remote = run_world(mock, "wrong-arg", tmp_path / "ray", trials=2, concurrency=2, backend=ray_backend)
    assert outputs(remote.out_dir, RUN_OUTPUTS) == outputs(local.out_dir, RUN_OUTPUTS)
    info = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert (info["backend"], info["workers"], info["concurrency"], info["world"]) == ("ray", 2, 2, "tau2-mock")
    assert info["status"] == "completed" and info["episodes_run"] == 2 * len(mock.tasks)
    classes = Counter(v.failure_class for v in remote.verdicts)
    assert classes["completed"] and classes["wrong_end_state"]  # passing and failing episodes: a real comparison
    assert all(t.ended_by != "error" for t in remote.traces)  # no episode lost on a worker


def test_verify_tau2_results_gives_the_local_bytes(ray_backend, results, tmp_path, capsys):
    f, labels, sims = results
    code, text = verify(capsys, f, labels, tmp_path / "local", "-j", "1")
    assert code == 0, text
    code, text = verify(capsys, f, labels, tmp_path / "ray", "--backend", "ray", "--workers", str(WORKERS))
    assert code == 0, text
    assert outputs(tmp_path / "ray", VERIFY_OUTPUTS) == outputs(tmp_path / "local", VERIFY_OUTPUTS)
    kept, rejected = lines(tmp_path / "ray" / "kept.jsonl"), lines(tmp_path / "ray" / "rejected.jsonl")
    assert len(kept) + len(rejected) == len(sims) and kept and rejected
    reasons = {r["kind"] for rec in rejected for r in rec["reasons"]}
    assert {"observation_mismatch", "reward_0"} <= reasons
    assert lines(tmp_path / "ray" / "disagreements.jsonl")  # the falsified gold run: τ² gave it 1


def test_verify_with_judge_gives_the_local_bytes(ray_backend, mock, results, tmp_path, capsys, monkeypatch):
    """Each Ray worker unpickles the judge and asks the local server itself (fresh caches on both
    sides: the Ray run sends its own requests; nothing is verified on the driver, where a batch of a
    dead worker would be); the judge's verdicts are in the identical outputs."""
    from groundeval.trajectories import run as trajectories_run

    f, labels, sims = results
    known = sorted({a for c in mock.criteria.values() for a in c.nl_assertions})
    prompts = distinct_prompts(mock, [s for s in sims if mock.criteria[s["task_id"]].nl_assertions])
    with JudgeServer(known) as server:
        server.fail = {"complimented"}  # some statements not met, the others met

        def judged_run(out: str, *extra: str) -> tuple[int, str]:  # a fresh response cache per run
            judge = ["--judge", f"openai:{MODEL}", "--judge-base-url", server.url, "--judge-cache", str(tmp_path / out)]
            return verify(capsys, f, labels, tmp_path / out / "out", *judge, *extra)

        code, text = judged_run("local", "-j", "1")
        assert code == 0, text
        asked = server.requests
        assert asked >= prompts > 0
        monkeypatch.setattr(trajectories_run, "Verifier", None)  # the driver verifies nothing from here on
        code, text = judged_run("ray", "--backend", "ray", "--workers", str(WORKERS))
        assert code == 0, text
        assert server.requests - asked >= prompts  # the workers asked the server
        local, ray = tmp_path / "local" / "out", tmp_path / "ray" / "out"
        assert outputs(ray, VERIFY_OUTPUTS) == outputs(local, VERIFY_OUTPUTS)
        judged = json.loads((ray / "summary.json").read_text())["judge"]
        assert judged["model"] == f"openai:{MODEL}" and judged["error"] == 0
        assert judged["all_met"] and judged["not_met"]  # both outcomes in the compared bytes
        results_ = lines(ray / "kept.jsonl") + lines(ray / "rejected.jsonl")
        verdicts = [a["met"] for r in results_ if r.get("judge") for a in r["judge"]["assertions"]]
        assert True in verdicts and False in verdicts
        assert judged["judged"] == sum(1 for r in results_ if r.get("judge"))

        # a refused key: the run stops on the worker's error, with the local message (exit 2)
        server.status = 401
        monkeypatch.undo()
        refused = judged_run("local401", "-j", "1")
        on_ray = judged_run("ray401", "--backend", "ray", "--workers", "1")  # one worker raises it (one start)
    assert refused[0] == 2 and refused[1].startswith("error: --judge: openai:judge-model:") and "401" in refused[1]
    # the same exit and error line; Ray itself may log to stderr beside it on a busy machine
    assert on_ray[0] == refused[0] and "Traceback" not in on_ray[1]
    assert _errors(on_ray[1]) == _errors(refused[1]) != []


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("error:")]
