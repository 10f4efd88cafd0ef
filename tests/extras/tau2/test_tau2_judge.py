"""``trajectories verify --judge`` on τ²'s own mock domain, and agreement with τ²'s own
natural-language-assertion evaluator pointed at the same real local model server
(tests/trajectories/judge_server.py, which decides each assertion from its text alone, so both
prompts get the same answer). The simulations are made here by τ²'s own environment; nothing of
τ²'s data is copied into the repository."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("httpx")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "trajectories"))

from judge_server import JudgeServer  # noqa: E402

from test_tau2_verify import lines, run_cli  # noqa: E402

MODEL = "judge-model"


@pytest.fixture(scope="module")
def mock():
    from groundeval.worlds.tau2 import load_tau2_world

    return load_tau2_world("mock")


@pytest.fixture(scope="module")
def nl_sims(mock):
    """(τ² task, variant, τ²'s simulation) for every mock task with natural-language assertions:
    its gold run and its first perturbations."""
    from groundeval.trajectories.tau2_agreement import simulate, variants

    out = []
    for task in mock.domain.tasks:
        if not mock.criteria[task.id].nl_assertions:
            continue
        for name, calls in variants(mock, task.id)[:3]:
            out.append((task, name, simulate(mock, task, calls)))
    return out


@pytest.fixture
def server(mock):
    known = sorted({a for c in mock.criteria.values() for a in c.nl_assertions})
    with JudgeServer(known) as s:
        yield s


@pytest.fixture
def tau2_judge(server, monkeypatch):
    """τ²'s evaluator's judge, pointed at the local server (litellm's openai/<model> with api_base)."""
    import tau2.evaluator.evaluator_nl_assertions as nl

    monkeypatch.setattr(nl, "DEFAULT_LLM_NL_ASSERTIONS", f"openai/{MODEL}")
    monkeypatch.setattr(
        nl, "DEFAULT_LLM_NL_ASSERTIONS_ARGS", {"temperature": 0.0, "api_base": server.url, "api_key": "local"}
    )
    return nl.NLAssertionsEvaluator


def as_record(sim, rid: str) -> dict:
    rec = json.loads(sim.model_dump_json())
    rec["id"] = rid
    return rec


def write_results(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps({"info": {"domain": "mock"}, "tasks": [], "simulations": records}), encoding="utf-8")
    return path


def distinct_prompts(mock, records: list[dict]) -> int:
    """How many different judge requests the records make (two runs whose conversations and
    assertions are the same make one: the second is answered by the cache)."""
    from groundeval.trajectories.judge import conversation, user_prompt
    from groundeval.trajectories.model import Location
    from groundeval.trajectories.shapes import read_record
    from groundeval.trajectories.stream import RawRecord

    prompts = set()
    for i, rec in enumerate(records):
        t = read_record(RawRecord(Location("nl", None, i), rec, "simulations"))
        prompts.add(user_prompt(conversation(t), mock.criteria[t.task_id].nl_assertions))
    return len(prompts)


def verify(capsys, f: Path, out: Path, server, cache: Path, *extra) -> tuple[int, str, dict[str, dict]]:
    args = ["trajectories", "verify", str(f), "-w", "tau2:mock", "-o", str(out), "-j", "1"]
    args += ["--judge", f"openai:{MODEL}", "--judge-base-url", server.url, "--judge-cache", str(cache), *extra]
    code, text = run_cli(capsys, *args)
    res = {}
    if code == 0:
        res = {r["id"]: r for r in lines(out / "kept.jsonl") + lines(out / "rejected.jsonl")}
    return code, text, res


def test_judge_agrees_with_tau2s_nl_assertion_evaluator_per_assertion(mock, nl_sims, server, tau2_judge, tmp_path):
    from groundeval.trajectories.judge import make_judge
    from groundeval.trajectories.model import Location
    from groundeval.trajectories.shapes import read_record
    from groundeval.trajectories.stream import RawRecord
    from groundeval.trajectories.verify import Verifier

    server.fail = {"complimented", "acknowledged"}
    verifier = Verifier(mock, make_judge(f"openai:{MODEL}", base_url=server.url, cache_dir=tmp_path))
    factors, records = [], []
    for i, (task, name, sim) in enumerate(nl_sims):
        theirs = tau2_judge.calculate_reward(task=task, full_trajectory=sim.messages)
        records.append(as_record(sim, f"{task.id}/{name}"))
        traj = read_record(RawRecord(Location("nl", None, i), records[-1], "simulations"))
        ours = verifier.verify(traj)["judge"]
        assert ours["status"] == "ok", ours
        assert [(a["assertion"], a["met"]) for a in ours["assertions"]] == [
            (c.nl_assertion, c.met) for c in theirs.nl_assertions
        ], (task.id, name)
        factor = 1.0 if all(a["met"] for a in ours["assertions"]) else 0.0
        assert theirs.reward == factor
        factors.append(factor)
    assert set(factors) == {0.0, 1.0}  # both outcomes were compared
    assert server.kinds.count("tau2") == len(nl_sims)
    assert server.kinds.count("groundeval") == distinct_prompts(mock, records) > len(nl_sims) // 2


@pytest.mark.slow
def test_judge_agrees_with_tau2s_evaluator_on_airline_gold_runs(tmp_path, monkeypatch):
    """Every airline task lists natural-language assertions (244 over the gold and first perturbed
    runs): each is decided from its own text by its length's parity, so both outcomes occur and an
    assertion whose text a prompt changed (spaces, line breaks) would be caught. 100/100 agree."""
    import tau2.evaluator.evaluator_nl_assertions as nl

    from groundeval.trajectories.judge import make_judge
    from groundeval.trajectories.model import Location
    from groundeval.trajectories.shapes import read_record
    from groundeval.trajectories.stream import RawRecord
    from groundeval.trajectories.tau2_agreement import simulate, variants
    from groundeval.trajectories.verify import Verifier
    from groundeval.worlds.tau2 import load_tau2_world

    w = load_tau2_world("airline")
    with JudgeServer(sorted({a for c in w.criteria.values() for a in c.nl_assertions})) as server:
        server.met = lambda a: len(a) % 2 == 1
        monkeypatch.setattr(nl, "DEFAULT_LLM_NL_ASSERTIONS", f"openai/{MODEL}")
        monkeypatch.setattr(
            nl, "DEFAULT_LLM_NL_ASSERTIONS_ARGS", {"temperature": 0.0, "api_base": server.url, "api_key": "local"}
        )
        verifier = Verifier(w, make_judge(f"openai:{MODEL}", base_url=server.url, cache_dir=tmp_path))
        n, outcomes = 0, set()
        for task in w.domain.tasks:
            for name, calls in variants(w, task.id)[:2]:
                sim = simulate(w, task, calls)
                theirs = nl.NLAssertionsEvaluator.calculate_reward(task=task, full_trajectory=sim.messages)
                t = read_record(RawRecord(Location("nl", None, n), as_record(sim, f"{task.id}/{name}"), "simulations"))
                ours = verifier.verify(t)["judge"]["assertions"]
                assert [(a["assertion"], a["met"]) for a in ours] == [
                    (c.nl_assertion, c.met) for c in theirs.nl_assertions
                ], (task.id, name)
                assert theirs.reward == (1.0 if all(a["met"] for a in ours) else 0.0)
                outcomes.add(theirs.reward)
                n += 1
    assert n == 100 and outcomes == {0.0, 1.0}


def test_reward_with_nl_assertion_in_the_basis_matches_tau2s(mock, nl_sims, server, tau2_judge, tmp_path, capsys):
    """τ²'s mock tasks do not count their assertions; with NL_ASSERTION added to one task's basis
    (in τ²'s task and in the world's criteria alike), τ²'s evaluate_simulation
    (all_with_nl_assertions) and groundeval give the same reward: 1 when every assertion is met,
    0 when one is not; a second run is answered by the cache (no request, the same bytes)."""
    from tau2.data_model.tasks import RewardType
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    from groundeval.worlds.tau2.state import deterministic_ids

    task_id = "create_task_1"
    task = next(t for t, _, _ in nl_sims if t.id == task_id)
    crit = mock.criteria[task_id]
    monkeypatch = pytest.MonkeyPatch()
    try:
        monkeypatch.setattr(crit, "reward_basis", [*crit.reward_basis, "NL_ASSERTION"])
        monkeypatch.setattr(
            task.evaluation_criteria, "reward_basis", [*task.evaluation_criteria.reward_basis, RewardType.NL_ASSERTION]
        )
        sims = [(name, sim) for t, name, sim in nl_sims if t.id == task_id]
        f = write_results(tmp_path / "results.json", [as_record(sim, name) for name, sim in sims])
        for fail, gold_reward in (((), 1.0), (("confirmed",), 0.0)):
            server.fail = set(fail)
            out = tmp_path / f"out-{len(fail)}"
            code, text, res = verify(capsys, f, out, server, tmp_path / f"cache-{len(fail)}")
            assert code == 0, text
            assert res["gold"]["reward"] == gold_reward
            judged = json.loads((out / "summary.json").read_text())["judge"]
            assert judged["judged"] == len(sims) and judged["error"] == 0
            assert judged["all_met" if gold_reward else "not_met"] == len(sims)
            for name, sim in sims:
                deterministic_ids.reset()
                theirs = evaluate_simulation(sim, task, EvaluationType.ALL_WITH_NL_ASSERTIONS, False, "mock")
                assert res[name]["reward"] == theirs.reward, name
                assert [a["met"] for a in res[name]["judge"]["assertions"]] == [c.met for c in theirs.nl_assertions]
            if gold_reward == 0.0:
                [reason] = [r for r in res["gold"]["reasons"] if r["kind"] == "reward_0"]
                assert "not met (openai:judge-model)" in reason["message"]
            sent = server.requests
            again = tmp_path / f"again-{len(fail)}"
            code, _, _ = verify(capsys, f, again, server, tmp_path / f"cache-{len(fail)}")
            assert code == 0 and server.requests == sent
            for name in ("kept.jsonl", "rejected.jsonl", "summary.json"):
                assert (out / name).read_bytes() == (again / name).read_bytes(), name
    finally:
        monkeypatch.undo()


def test_unreadable_replies_are_judge_errors_and_a_bad_key_stops(mock, nl_sims, server, tmp_path, capsys):
    records = [as_record(sim, f"{t.id}/{name}") for t, name, sim in nl_sims if name == "gold"]
    f = write_results(tmp_path / "results.json", records)
    server.bad_replies = 10_000
    code, text, res = verify(capsys, f, tmp_path / "out", server, tmp_path / "cache")
    assert code == 0, text  # judge errors are results (rejected, counted), not a failed command
    assert server.requests == 3 * distinct_prompts(mock, records)
    for r in res.values():
        assert r["judge"]["status"] == "error" and r["judge"]["attempts"] == 3
        assert not any(x["kind"] == "judge_error" for x in r["reasons"])  # mock's basis does not count them
        assert any("the judge gave no usable verdict" in n for n in r["notes"])
        assert r["reward"] is not None
    server.status = 401
    code, text, _ = verify(capsys, f, tmp_path / "out401", server, tmp_path / "cache401")
    assert code == 2 and text.startswith("error: --judge: openai:judge-model:") and "401" in text


def test_judge_error_reason_when_the_basis_counts_the_assertions(mock, nl_sims, server, tmp_path, capsys):
    task_id = "create_task_1"
    crit = mock.criteria[task_id]
    monkeypatch = pytest.MonkeyPatch()
    try:
        monkeypatch.setattr(crit, "reward_basis", [*crit.reward_basis, "NL_ASSERTION"])
        records = [as_record(sim, name) for t, name, sim in nl_sims if t.id == task_id and name == "gold"]
        f = write_results(tmp_path / "results.json", records)
        server.bad_replies = 10_000
        code, text, res = verify(capsys, f, tmp_path / "out", server, tmp_path / "cache")
        assert code == 0, text
        r = res["gold"]
        assert r["reward"] is None and not r["kept"]
        assert [x["kind"] for x in r["reasons"]] == ["judge_error"]
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["reasons"] == {"judge_error": 1}
        assert summary["judge"] == {"model": "openai:judge-model", "judged": 1, "all_met": 0, "not_met": 0, "error": 1}
        assert "judge_error 1" in text and "judge openai:judge-model: 1 judged" in text
        assert "judge errors 1" in (tmp_path / "out" / "report.md").read_text()
    finally:
        monkeypatch.undo()


def test_two_worker_processes_write_the_same_bytes(mock, nl_sims, server, tmp_path, capsys):
    records = [as_record(sim, f"{t.id}/{name}") for t, name, sim in nl_sims]
    f = write_results(tmp_path / "results.json", records)
    server.fail = {"complimented"}
    code, text, _ = verify(capsys, f, tmp_path / "one", server, tmp_path / "cache")
    assert code == 0, text
    code, text, _ = verify(capsys, f, tmp_path / "two", server, tmp_path / "cache2", "-j", "2")
    assert code == 0, text
    for name in ("kept.jsonl", "rejected.jsonl", "summary.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
