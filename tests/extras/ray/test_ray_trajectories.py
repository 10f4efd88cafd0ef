"""``groundeval trajectories verify FILE --backend ray`` verifies batches of records on Ray workers
and writes the local backend's bytes: kept, rejected, disagreements, summary and report, in file
order. The file: every baseline's episodes on the test world (tests/worlds/shop) as world traces,
with a fabricated tool output, a line that is not JSON and labels that disagree on some."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_ray_identity import cli

from groundeval.trajectories import run as trajectories_run
from groundeval.trajectories.run import verify_file
from groundeval.worlds.run import run_world

SHOP = Path(__file__).resolve().parents[2] / "worlds" / "shop"
OUTPUTS = ("kept.jsonl", "rejected.jsonl", "disagreements.jsonl", "summary.json", "report.md")
BASELINES = ("gold", "skip-confirm", "wrong-arg", "forbidden", "early-stop", "padding")


def outputs(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in OUTPUTS}


@pytest.fixture(scope="module")
def trajectories(tmp_path_factory) -> tuple[Path, Path]:
    """(the file, its labels): 6 baselines x 5 tasks x 10 trials = 300 world traces, one of them
    with a made-up tool result, then a torn line; every trace labelled 1 (an outcome-only grader)."""
    tmp = tmp_path_factory.mktemp("trajectories")
    lines = []
    for agent in BASELINES:
        run_world(SHOP, agent, tmp / agent, trials=10)
        lines += (tmp / agent / "traces.jsonl").read_text().splitlines()
    forged = json.loads(lines[7])
    call = next(c for c in forged["calls"] if c["status"] == "ok" and isinstance(c["result"], dict))
    call["result"][sorted(call["result"])[0]] = "made up"
    lines[7] = json.dumps(forged, sort_keys=True)
    lines.insert(40, '{"kind": "world-trace", "task_id": ')
    path = tmp / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    labels = tmp / "labels.jsonl"
    traces = [json.loads(x) for x in lines if x.endswith("}")]
    ids = [f"{t['task_id']}:{t['agent']}:{t['trial']}" for t in traces]  # the id a world trace is read with
    labels.write_text("".join(json.dumps({"id": i, "reward": 1}) + "\n" for i in ids))
    return path, labels


def test_verify_gives_the_local_bytes(ray_backend, trajectories, tmp_path):
    path, labels = trajectories
    local = verify_file(path, str(SHOP), tmp_path / "local", labels=labels, workers=1)
    remote = verify_file(path, str(SHOP), tmp_path / "ray", labels=labels, backend=ray_backend)
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "local")
    assert remote.total == local.total == 301 and remote.unreadable == 1
    assert remote.kept and remote.rejected > remote.unreadable  # both kinds of result: a real comparison
    assert {"observation_mismatch", "policy_breach", "reward_0", "unreadable"} <= set(remote.reasons)
    assert remote.confusion["fn"] and (tmp_path / "ray" / "disagreements.jsonl").read_text()


def test_many_small_batches_merge_in_file_order(ray_backend, trajectories, tmp_path, monkeypatch):
    path, labels = trajectories
    verify_file(path, str(SHOP), tmp_path / "local", labels=labels, workers=1)
    monkeypatch.setattr(trajectories_run, "RAY_BATCH", 7)  # 43 batches over the 2 workers
    verify_file(path, str(SHOP), tmp_path / "ray", labels=labels, backend=ray_backend)
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "local")


def test_cli_verify_with_ray_backend(ray_backend, trajectories, tmp_path, capsys):
    path, labels = trajectories
    common = (path, "--world", SHOP, "--labels", labels, "--no-progress")
    code, local_text, err = cli(capsys, "trajectories", "verify", *common, "--out", tmp_path / "local", "-j", "2")
    assert code == 0, err
    code, text, err = cli(
        capsys,
        "trajectories",
        "verify",
        *common,
        "--out",
        tmp_path / "ray",
        "--backend",
        "ray",
        "--workers",
        "2",
    )
    assert code == 0, err
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "local")
    assert text.replace(str(tmp_path / "ray"), "OUT") == local_text.replace(str(tmp_path / "local"), "OUT")
    code, _t, err = cli(capsys, "trajectories", "verify", *common, "--out", tmp_path / "x", "--ray-address", "auto")
    assert code == 2 and "--ray-address: needs --backend ray" in err and "Traceback" not in err
    code, _t, err = cli(
        capsys, "trajectories", "verify", *common, "--out", tmp_path / "x", "--backend", "ray", "-j", "9"
    )
    assert code == 2 and "--workers: 9 workers, but the Ray cluster has 2 CPUs" in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_a_worker_dying_costs_nothing(ray_backend, trajectories, tmp_path):
    """A copy of the test world whose open_ticket kills the process it runs in when the note says so
    (except on the driver): the batch holding that call is verified again on the driver, so the
    outputs are still the local ones; a marker file proves a worker did die."""
    world = tmp_path / "shop"
    shutil.copytree(SHOP, world, ignore=shutil.ignore_patterns("__pycache__"))
    marker = tmp_path / "died"
    tools = world / "tools.py"
    tools.write_text(
        tools.read_text().replace(
            "def open_ticket(state, order_id, note):\n",
            "def open_ticket(state, order_id, note):\n"
            f"    if note == 'crash the worker' and __import__('os').getpid() != {os.getpid()}:\n"
            f"        open({str(marker)!r}, 'w').close()\n"
            "        __import__('os')._exit(17)\n",
        )
    )
    path, labels = trajectories
    lines = path.read_text().splitlines()
    victim = next(i for i, x in enumerate(lines) if '"tool":"open_ticket"' in x and '"status":"ok"' in x)
    doomed = json.loads(lines[victim])
    for c in doomed["calls"]:
        if c["tool"] == "open_ticket":
            c["arguments"]["note"] = "crash the worker"
    lines[victim] = json.dumps(doomed, sort_keys=True)
    crashing = tmp_path / "crashing.jsonl"
    crashing.write_text("\n".join(lines) + "\n")
    verify_file(crashing, str(world), tmp_path / "local", labels=labels, workers=1)
    verify_file(crashing, str(world), tmp_path / "ray", labels=labels, backend=ray_backend)
    assert marker.exists()
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "local")
