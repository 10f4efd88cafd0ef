"""``groundeval worlds import tau2`` and ``groundeval trajectories verify`` on τ² results files made
here by τ²'s own environment: gold runs, perturbed runs, a fabricated tool output, a truncated file."""

from __future__ import annotations

import json

import pytest

from groundeval.cli.main import main


def run_cli(capsys, *args) -> tuple[int, str]:
    """The CLI's exit code and what it printed (nothing read without ``capsys``: module fixtures)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    if capsys is None:
        return code, ""
    got = capsys.readouterr()
    return code, got.out + got.err


def lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def graded_simulations(w) -> list[dict]:
    """Every task's gold run and perturbations of a τ² world, as τ² results records (id
    ``task/variant``), each with the reward τ²'s own evaluator gives it (those it cannot grade left out)."""
    from groundeval.trajectories.tau2_agreement import simulate, tau2_reward, variants

    sims = []
    for task in w.domain.tasks:
        for name, calls in variants(w, task.id):
            sim = simulate(w, task, calls)
            reward, err = tau2_reward(w, task, sim)
            if err is not None:
                continue
            rec = json.loads(sim.model_dump_json())
            rec["id"] = f"{task.id}/{name}"
            rec["reward_info"] = {"reward": reward}
            sims.append(rec)
    return sims


@pytest.fixture(scope="module")
def mock_results(tmp_path_factory):
    """A τ² results file of the mock domain: every task's gold run and perturbations, rewards by τ²."""
    from groundeval.worlds.tau2 import load_tau2_world

    w = load_tau2_world("mock")
    return w, graded_simulations(w)


def test_import_writes_a_world_folder_that_loads_and_replays_like_the_package(tmp_path, capsys):
    from groundeval.worlds import load_world
    from groundeval.worlds.tau2 import load_tau2_world

    out = tmp_path / "mock"
    code, text = run_cli(capsys, "worlds", "import", "tau2", "mock", str(out))
    assert code == 0, text
    assert {p.name for p in out.iterdir()} == {"world.yaml", "policy.md", "state", "tasks.jsonl", "tau2_criteria.jsonl"}
    folder = load_world(out)
    direct = load_tau2_world("mock")
    assert sorted(t.id for t in folder.tasks) == sorted(t.id for t in direct.tasks)
    for t in folder.tasks:
        assert folder.expected(t)[0] == direct.expected(direct.task(t.id))[0]
    again = tmp_path / "again"
    run_cli(capsys, "worlds", "import", "tau2", "mock", str(again))
    for p in sorted(out.rglob("*")):
        if p.is_file():
            assert p.read_bytes() == (again / p.relative_to(out)).read_bytes(), p.name
    code, text = run_cli(capsys, "worlds", "import", "tau2", "mock", str(out))
    assert code == 2 and "not empty" in text


def test_verify_tau2_results_gold_perturbed_fabricated_and_truncated(mock_results, tmp_path, capsys):
    w, sims = mock_results
    sims = [dict(s) for s in sims]
    # falsify the first recorded output of one gold run
    target = next(s for s in sims if s["id"].endswith("/gold") and any(m["role"] == "tool" for m in s["messages"]))
    k = next(i for i, m in enumerate(target["messages"]) if m["role"] == "tool")
    body = json.loads(target["messages"][k]["content"])
    first_key = sorted(body)[0]
    body[first_key] = "fabricated"
    target["messages"][k]["content"] = json.dumps(body)
    f = tmp_path / "results.json"
    f.write_text(json.dumps({"info": {"domain": "mock"}, "tasks": [], "simulations": sims}, indent=4), encoding="utf-8")
    out = tmp_path / "out"
    code, text = run_cli(capsys, "trajectories", "verify", str(f), "-w", "tau2:mock", "-o", str(out), "-j", "1")
    assert code == 0, text
    res = {r["id"]: r for r in lines(out / "kept.jsonl") + lines(out / "rejected.jsonl")}
    assert len(res) == len(sims)
    fab = res[target["id"]]
    [m] = [r for r in fab["reasons"] if r["kind"] == "observation_mismatch"]
    assert m["trajectory"] == target["id"] and m["field"].endswith(f".output.{first_key}")
    calls_before = sum(len(x.get("tool_calls") or []) for x in target["messages"][:k])
    assert m["step"] == calls_before - 1
    # every other run: kept exactly when tau2 graded it 1 and nothing was flagged
    for s in sims:
        if s["id"] == target["id"]:
            continue
        r = res[s["id"]]
        assert r["reward"] == s["reward_info"]["reward"], s["id"]
        assert r["kept"] == (r["reward"] == 1.0 and not any(x["kind"] == "policy_breach" for x in r["reasons"]))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["labels"]["confusion"]["fp"] == 0  # nothing kept that tau2 failed
    # the same file cut in the middle: every simulation before the cut verified, the cut located
    text = f.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    out2 = tmp_path / "out2"
    code, _ = run_cli(capsys, "trajectories", "verify", str(cut), "-w", "tau2:mock", "-o", str(out2), "-j", "1")
    assert code == 0
    rejected = lines(out2 / "rejected.jsonl")
    torn = [r for r in rejected if r["reasons"][0]["kind"] == "unreadable"]
    assert len(torn) == 1 and "truncated" in torn[0]["reasons"][0]["message"]
    n = len(lines(out2 / "kept.jsonl")) + len(rejected) - 1
    assert 0 < n < len(sims)
    assert [r["id"] for r in lines(out2 / "kept.jsonl")] == [
        r["id"] for r in lines(out / "kept.jsonl") if r["where"]["index"] < n
    ]
