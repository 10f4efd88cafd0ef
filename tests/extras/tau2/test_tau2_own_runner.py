"""``groundeval trajectories verify`` on results files written end to end by τ²'s OWN runner
(``tau2.run.run_domain``), as users bring them: τ²'s orchestrator, its LLM agent and its user
simulator, both calling a real local OpenAI-compatible server through litellm
(scripted_llm_server.py: the agent makes a task's gold calls or a wrong variant of them, the user
opens and then says τ²'s stop token). Nothing of τ² is copied here: the plans are made at test
time from the installed package's tasks.

Checked per simulation: read (none unreadable), groundeval's reward equal to τ²'s own
``reward_info.reward`` in the file, no recorded output reported as fabricated (τ²'s environment
wrote every one), the wrong variants rejected with a reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripted_llm_server import ScriptedTau2Server  # noqa: E402
from test_tau2_verify import run_cli  # noqa: E402

pytestmark = pytest.mark.slow  # τ²'s runner: importing it (litellm) and running ~120 simulations, ~25 s

UNKNOWN = ("delete_user", {"user_id": "x"})  # a tool no domain has: τ² answers "Tool ... not found"
MOCK_BAD_STATUS = ("update_task_status", {"task_id": "task_1", "status": "finished"})  # not in the enum
MOCK_MISSING_TASK = ("update_task_status", {"task_id": "task_999", "status": "completed"})  # τ²'s tool raises


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def script(world, task_ids: list[str], extra: dict | None = None):
    """(scenarios, plans, closing) for the server: one ref per distinct user scenario (tasks that
    share a scenario share a plan: the first task's); plans by variant, from groundeval's
    perturbation family of the task's gold calls; ``extra(gold) -> {variant: plan}`` adds more."""
    from groundeval.trajectories.tau2_agreement import variants

    scenarios: dict[str, str] = {}
    plans: dict[str, dict] = {}
    closing: dict[str, str] = {}
    for task in world.domain.tasks:
        if task.id not in task_ids:
            continue
        ref = scenarios.setdefault(str(task.user_scenario), f"r{len(scenarios)}")
        if ref not in plans:
            named = {n: [(c[0], c[1]) for c in calls if c[2] == "assistant"] for n, calls in variants(world, task.id)}
            gold = named["gold"]
            plans[ref] = {"gold": gold, "unknown-tool": [UNKNOWN, *gold]}
            for variant, name in (("change-arg", "change_arg:0"), ("drop-write", "drop_write:0")):
                if name in named:
                    plans[ref][variant] = named[name]
            plans[ref].update(extra(gold) if extra else {})
        said = closing.get(ref, "")
        more = [x for x in world.criteria[task.id].communicate_info if x not in said]
        closing[ref] = " ".join([said, *more]).strip() or "Done."
    return scenarios, plans, closing


def mock_edges(gold: list) -> dict:
    return {
        "bad-enum": [MOCK_BAD_STATUS, *gold],
        "tool-error": [MOCK_MISSING_TASK, ("update_task_status", {"task_id": "task_1"}), *gold],  # + a missing argument
        "parallel": [{"calls": [("get_users", {}), *gold]}] if gold else [("get_users", {})],
        "mixed": [{"calls": [c], "content": "One moment, please."} for c in gold],
        "errors": [UNKNOWN] * 11,  # τ² stops after max_errors (10) failing calls in a row
    }


def run_tau2(domain: str, server: ScriptedTau2Server, variant: str, out: Path, task_ids: list[str], **cfg) -> Path:
    """τ²'s own runner, 1 trial, concurrency 1, both models on the local server; its results file."""
    from tau2.data_model.simulation import RunConfig
    from tau2.run import run_domain

    args = {"api_base": server.url, "api_key": "local", "temperature": 0.0}
    name = f"{domain}-{variant}" + ("".join(f"-{k}{v}" for k, v in sorted(cfg.items())))
    config = RunConfig(
        domain=domain,
        task_ids=task_ids,
        llm_agent=f"openai/agent-{variant}",
        llm_args_agent=args,
        llm_user="openai/user",
        llm_args_user=dict(args),
        llm_args_judge={},  # τ² 26.3's run_domain copies it: None (its default) raises
        num_trials=1,
        max_concurrency=1,
        results_dir=str(out),
        save_to=name,
        log_level="ERROR",
        skip_failed_samples=True,  # a simulation τ²'s evaluator raises on is written as skipped, reward 0
        **{"max_steps": 60, "agent": "llm_agent", "user": "user_simulator", **cfg},
    )
    run_domain(config)
    path = out / f"{name}.json"
    assert path.is_file(), sorted(p.name for p in out.iterdir())
    return path


def call_index(sim: dict, name: str, **args) -> int:
    """The index (groundeval's step) of the first tool call of ``sim`` with this name and these arguments."""
    calls = [c for m in sim["messages"] for c in m.get("tool_calls") or []]
    return next(i for i, c in enumerate(calls) if c["name"] == name and args.items() <= c["arguments"].items())


def verify(capsys, path: Path, world: str, out: Path) -> tuple[list[dict], dict, list[dict]]:
    """(τ²'s simulations, groundeval's result per simulation id, summary) of one results file."""
    code, text = run_cli(capsys, "trajectories", "verify", str(path), "-w", world, "-o", str(out), "-j", "1")
    assert code == 0, text
    sims = json.loads(path.read_text(encoding="utf-8"))["simulations"]
    results = lines(out / "kept.jsonl") + lines(out / "rejected.jsonl")
    by_id = {r["id"]: r for r in results}
    assert len(by_id) == len(results) == len(sims), text
    return sims, by_id, json.loads((out / "summary.json").read_text(encoding="utf-8"))


MOCK_VARIANTS = ["gold", "change-arg", "drop-write", "unknown-tool", "bad-enum", "tool-error", "parallel", "mixed"]


@pytest.fixture(scope="module")
def mock_runs(tmp_path_factory):
    """{name: (results file, plans)} of τ²'s runner on every mock task, one file per agent variant,
    plus runs cut by τ²'s limits (max_errors, max_steps)."""
    from groundeval.worlds.tau2 import load_tau2_world

    w = load_tau2_world("mock")
    ids = [t.id for t in w.domain.tasks]
    scenarios, plans, closing = script(w, ids, mock_edges)
    out = tmp_path_factory.mktemp("tau2-runs")
    with ScriptedTau2Server(scenarios, plans, closing) as server:
        files = {v: run_tau2("mock", server, v, out, ids) for v in MOCK_VARIANTS}
        files["errors"] = run_tau2("mock", server, "errors", out, ids)
        files["max-steps"] = run_tau2("mock", server, "gold", out, ids, max_steps=3)
        # text beside a call breaks τ²'s protocol when enforced: agent_error, the call left unanswered
        files["enforced"] = run_tau2("mock", server, "mixed", out, ids, enforce_communication_protocol=True)
        asked = {r["model"] for r in server.requests}
    assert asked == {"user", *(f"agent-{v}" for v in [*MOCK_VARIANTS, "errors"])}
    return w, files, plans, scenarios


@pytest.fixture(scope="module")
def mock_verified(mock_runs, tmp_path_factory):
    w, files, plans, scenarios = mock_runs
    out = tmp_path_factory.mktemp("verified")
    return {name: verify(None, path, "tau2:mock", out / name) for name, path in files.items()}


def test_every_simulation_of_taus_own_runner_is_read_and_graded_as_tau2_grades_it(mock_verified):
    total = agree = 0
    for name, (sims, by_id, summary) in mock_verified.items():
        assert summary["total"] == len(sims) and summary["unreadable"] == 0, name
        for s in sims:
            r = by_id[s["id"]]
            total += 1
            assert r["shape"] == "tau2" and r["task_id"] == s["task_id"], (name, s["id"])
            assert r["reward"] == s["reward_info"]["reward"], (name, s["task_id"], r["reasons"])
            agree += 1
            # τ²'s environment wrote every recorded output: none is reported as fabricated
            assert not [x for x in r["reasons"] if x["kind"] == "observation_mismatch"], (name, s["task_id"], r)
            assert r["kept"] == (r["reward"] == 1 and not r["reasons"])
    assert agree == total == 9 * len(mock_verified)


def test_wrong_variants_are_rejected_with_a_reason_naming_what_is_wrong(mock_runs, mock_verified):
    w, files, plans, scenarios = mock_runs
    ref_of = {t.id: scenarios[str(t.user_scenario)] for t in w.domain.tasks}
    wrong = 0
    for variant in ("change-arg", "drop-write"):
        sims, by_id, _ = mock_verified[variant]
        for s in sims:
            plan = plans[ref_of[s["task_id"]]]
            if variant not in plan or s["reward_info"]["reward"] == 1:
                continue  # no write to get wrong, or a wrong write τ² does not see (its basis)
            r = by_id[s["id"]]
            [reason] = [x for x in r["reasons"] if x["kind"] == "reward_0"]
            assert not r["kept"] and reason["trajectory"] == s["id"], r
            # what differs: the end state, the gold write not made, or τ²'s assertion not met
            assert any(w in reason["message"] for w in ("end state differs", "missing writes", "assertion not met")), r
            wrong += 1
    assert wrong >= 10
    # a call of a tool the agent does not have: τ² gives 1 (its state is right), groundeval names the call
    sims, by_id, _ = mock_verified["unknown-tool"]
    for s in sims:
        r = by_id[s["id"]]
        [breach] = [x for x in r["reasons"] if x["kind"] == "policy_breach"]
        assert not r["kept"] and "delete_user" in breach["message"], r
        assert breach["step"] == call_index(s, UNKNOWN[0]) and breach["field"] == f"calls[{breach['step']}]"


def test_an_argument_outside_the_tools_schema_is_replayed_as_taus_tool_ran_it(mock_verified):
    """τ²'s environment runs a call whatever its arguments (mock's update_task_status stores a
    status that is not in its enum): the replay must too — flagged, not refused — or it reports an
    honest output as fabricated and grades an end state that never was."""
    sims, by_id, _ = mock_verified["bad-enum"]
    rewards = set()
    for s in sims:
        r = by_id[s["id"]]
        rewards.add(s["reward_info"]["reward"])
        assert r["reward"] == s["reward_info"]["reward"], (s["task_id"], r["reasons"])
        [breach] = [x for x in r["reasons"] if x["kind"] == "policy_breach"]
        assert "invalid_arguments" in breach["message"] and "finished" in breach["message"], breach
        assert breach["step"] == call_index(s, MOCK_BAD_STATUS[0], **MOCK_BAD_STATUS[1])
    assert rewards == {0.0, 1.0}  # the stored status breaks the end state unless a gold write repairs it


def test_taus_terminations_and_message_shapes(mock_runs, mock_verified):
    """too_many_errors and max_steps runs are graded 0 like τ² grades them; a skipped sample
    (τ²'s evaluator raised: no messages, agent_error) is read and graded 0; several calls in one
    message, text beside a call, and a tool's error are all read and replayed."""
    seen = {}
    for name, (sims, by_id, _) in mock_verified.items():
        for s in sims:
            seen.setdefault(s["termination_reason"], []).append((name, s, by_id[s["id"]]))
    assert {n for n, _, _ in seen["too_many_errors"]} == {"errors"} and len(seen["too_many_errors"]) == 9
    assert {n for n, _, _ in seen["max_steps"]} == {"max-steps"}
    enforced = [(s, r) for n, s, r in seen["agent_error"] if n == "enforced"]
    assert len(enforced) >= 5 and all(s["messages"][-1].get("tool_calls") for s, _ in enforced)
    for _, s, r in seen["too_many_errors"] + seen["max_steps"] + [(None, s, r) for s, r in enforced]:
        [reason] = [x for x in r["reasons"] if x["kind"] == "reward_0"]
        assert r["reward"] == 0 and f"the run ended by {s['termination_reason']}" in reason["message"], r
    skipped = [(s, r) for _, s, r in seen.get("agent_error", []) if s.get("skipped")]
    assert skipped, "mock's drop-write of create_task_1_with_env_assertions makes τ² 26.3's evaluator raise"
    for s, r in skipped:
        assert s["messages"] == [] and r["reward"] == 0 and r["calls"] == 0
    sims, by_id, _ = mock_verified["parallel"]
    two = [s for s in sims if any(len(m.get("tool_calls") or []) == 2 for m in s["messages"])]
    assert len(two) >= 5 and all(by_id[s["id"]]["calls"] >= 2 for s in two)
    sims, by_id, _ = mock_verified["tool-error"]
    assert all(any(m["role"] == "tool" and m.get("error") for m in s["messages"]) for s in sims)


def test_an_imported_world_folder_verifies_taus_results_the_same(mock_runs, mock_verified, tmp_path, capsys):
    w, files, plans, scenarios = mock_runs
    folder = tmp_path / "tau2-mock"
    code, text = run_cli(capsys, "worlds", "import", "tau2", "mock", str(folder))
    assert code == 0, text
    for name in ("gold", "change-arg", "bad-enum"):
        sims, by_id, _ = verify(capsys, files[name], str(folder), tmp_path / name)
        for s in sims:
            ours, theirs = by_id[s["id"]], mock_verified[name][1][s["id"]]
            assert (ours["reward"], ours["kept"], ours["reasons"]) == (
                theirs["reward"],
                theirs["kept"],
                theirs["reasons"],
            )


def test_the_run_summaries_beside_the_results_are_refused_naming_the_results_file(mock_runs, tmp_path, capsys):
    """τ²'s runner writes NAME.json (the simulations) with NAME_results.json (metrics) and
    NAME_termination_summary.json beside it: verifying a summary is exit 2, saying which file to verify."""
    results = mock_runs[1]["gold"]
    for suffix in ("_results.json", "_termination_summary.json"):
        summary = results.with_name(results.stem + suffix)
        assert summary.is_file()
        code, text = run_cli(
            capsys, "trajectories", "verify", str(summary), "-w", "tau2:mock", "-o", str(tmp_path / suffix)
        )
        assert code == 2 and "Traceback" not in text, text
        assert f"{summary}:1:" in text and f"a tau2 run summary; the simulations are in {results}" in text, text


AIRLINE_TASKS = ["2", "7", "8"]  # each with writes among its gold actions


def test_airline_runs_of_taus_own_runner_agree(tmp_path, capsys):
    from groundeval.worlds.tau2 import load_tau2_world

    w = load_tau2_world("airline")
    scenarios, plans, closing = script(w, AIRLINE_TASKS)
    with ScriptedTau2Server(scenarios, plans, closing) as server:
        files = {v: run_tau2("airline", server, v, tmp_path, AIRLINE_TASKS) for v in ("gold", "change-arg")}
    for name, path in files.items():
        sims, by_id, summary = verify(capsys, path, "tau2:airline", tmp_path / f"out-{name}")
        assert summary["unreadable"] == 0 and len(sims) == len(AIRLINE_TASKS)
        for s in sims:
            r = by_id[s["id"]]
            assert r["reward"] == s["reward_info"]["reward"] == (1 if name == "gold" else 0), (name, r["reasons"])
            assert not [x for x in r["reasons"] if x["kind"] == "observation_mismatch"], r
            assert r["kept"] == (name == "gold")


def test_telecom_runs_where_the_user_calls_its_phone_tools_agree(tmp_path, capsys):
    """τ²'s user simulator calls its own tools (telecom's phone: ``requestor: user`` on the call and
    on its tool message); tasks whose gold is the user's calls, then the agent's."""
    from groundeval.trajectories.tau2_agreement import variants
    from groundeval.worlds.tau2 import load_tau2_world

    w = load_tau2_world("telecom")
    scenarios, plans, closing, user_plans = {}, {}, {}, {}
    for task in w.domain.tasks:
        gold = dict(variants(w, task.id))["gold"]
        who = [c[2] for c in gold]
        if "user" not in who or "assistant" not in who or who != sorted(who, reverse=True):  # user calls first
            continue
        if str(task.user_scenario) in scenarios:
            continue
        ref = scenarios[str(task.user_scenario)] = f"r{len(scenarios)}"
        plans[ref] = {"gold": [(c[0], c[1]) for c in gold if c[2] == "assistant"]}
        user_plans[ref] = [(c[0], c[1]) for c in gold if c[2] == "user"]
        closing[ref] = " ".join(w.criteria[task.id].communicate_info) or "Done."
        if len(scenarios) == 3:
            break
    ids = [t.id for t in w.domain.tasks if str(t.user_scenario) in scenarios]
    assert len(scenarios) == 3
    with ScriptedTau2Server(scenarios, plans, closing, user_plans) as server:
        path = run_tau2("telecom", server, "gold", tmp_path, ids)
    sims, by_id, summary = verify(capsys, path, "tau2:telecom", tmp_path / "out")
    assert summary["unreadable"] == 0 and len(sims) == len(ids)
    for s in sims:
        r = by_id[s["id"]]
        calls = [c for m in s["messages"] for c in m.get("tool_calls") or []]
        assert {c["requestor"] for c in calls} == {"user", "assistant"}
        assert r["calls"] == len(calls) and r["reward"] == s["reward_info"]["reward"], r["reasons"]
        assert not [x for x in r["reasons"] if x["kind"] == "observation_mismatch"], r


@pytest.mark.parametrize("domain", ["mock", "telecom"])
def test_solo_runs_whose_agent_calls_the_users_tools_itself_agree(domain, tmp_path, capsys):
    """τ²'s solo agent (``llm_agent_solo`` with ``dummy_user``) works from the task's ticket alone and
    has the user's tools too (telecom's phone): its calls of them, ``requestor: assistant``, ran on
    the user's device. The results file's ``info`` says the agent was solo; the replay routes them
    the same way (before: unknown tools, their outputs reported as fabricated, telecom's reward 0
    where τ² gave 1)."""
    from tau2.agent.llm_agent import LLMSoloAgent

    from groundeval.trajectories.tau2_agreement import variants
    from groundeval.worlds.tau2 import load_tau2_world

    w = load_tau2_world(domain)
    tasks, tickets = [], {}  # the first task of each ticket (the server tells the task by it), at most 4
    for t in w.domain.tasks:
        if t.ticket and LLMSoloAgent.check_valid_task(t) and t.ticket not in tickets and len(tasks) < 4:
            tickets[t.ticket] = f"r{len(tasks)}"
            tasks.append(t)
    plans = {
        tickets[t.ticket]: {"gold": [(c[0], c[1]) for c in dict(variants(w, t.id))["gold"]] + [("done", {})]}
        for t in tasks
    }
    with ScriptedTau2Server(tickets, plans, {}) as server:
        path = run_tau2(
            domain, server, "gold", tmp_path, [t.id for t in tasks], agent="llm_agent_solo", user="dummy_user"
        )
    sims, by_id, summary = verify(capsys, path, f"tau2:{domain}", tmp_path / "out")
    assert summary["unreadable"] == 0 and len(sims) == len(tasks)
    users = 0
    for s in sims:
        r = by_id[s["id"]]
        assert s["termination_reason"] == "agent_stop" and not [m for m in s["messages"] if m["role"] == "user"]
        assert r["reward"] == s["reward_info"]["reward"], (s["task_id"], r["reasons"])
        assert not [x for x in r["reasons"] if x["kind"] in ("observation_mismatch", "policy_breach")], r
        users += sum(
            1 for m in s["messages"] for c in m.get("tool_calls") or [] if "user__" + c["name"] in w.manifest.tools
        )
    assert (users > 0) == (domain == "telecom")
