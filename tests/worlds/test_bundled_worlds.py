"""The two bundled worlds, support_desk and it_desk (issue 27 item 7), run through the real engine.

Each world loads (which replays every task's gold actions on the initial state: an erroring gold
call is a contract error); the gold agent gets reward 1.0 on every task with the deterministic
simulator; each misbehaving baseline gets the failure class the engine expects of it on every
task where its misbehaviour applies; outputs are byte-identical across runs, state file order
and ``PYTHONHASHSEED``; the generator in ``domain_packs/_build`` rewrites the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.worlds import load_world
from groundeval.worlds.agents import BASELINES, EXPECTED, GoldAgent, applies, make_agent
from groundeval.worlds.episode import run_episode
from groundeval.worlds.run import dumps
from groundeval.worlds.state import changes_digest
from groundeval.worlds.verdict import verdict

ROOT = Path(__file__).resolve().parents[2]
PACKS = ROOT / "domain_packs"
BUILD = PACKS / "_build"
WORLDS = ("support_desk", "it_desk")
TAGS = {"confirmation", "precondition", "multi_step", "refusal", "no_change", "required_output", "ordered"}
MISBEHAVING = sorted(n for n in BASELINES if n != "gold")


@pytest.fixture(scope="module", params=WORLDS)
def world(request):
    w = load_world(PACKS / request.param)
    yield w
    w.close()


def _writes(world, task) -> list[Any]:
    return [a for a in task.gold_actions if world.manifest.tools[a.tool].kind == "write"]


def _run_all(world, agent: str) -> str:
    """Every task's trace and verdict as canonical JSON lines."""
    lines = []
    for task in world.tasks:
        tr = run_episode(world, task, make_agent(agent))
        lines.append(dumps(tr))
        lines.append(dumps(verdict(world, task, tr)))
    return "\n".join(lines)


# --------------------------------------------------------------------------- the worlds' shape


def test_world_loads_with_enough_tagged_tasks(world):
    assert world.manifest.name in WORLDS
    assert len(world.tasks) >= 30
    counts = {tag: sum(tag in t.tags for t in world.tasks) for tag in TAGS}
    assert all(n >= 2 for n in counts.values()), counts
    for t in world.tasks:
        assert t.tags and set(t.tags) <= TAGS, (t.id, t.tags)
    for name, table in world.manifest.tables.items():
        n = sum(1 for _ in (world.folder / table.source).open(encoding="utf-8"))
        assert n >= 35, (name, n)


def test_tags_say_what_the_task_holds(world):
    """Each tag is checked against the task's content, so a tag cannot drift from the task."""
    confirm_before = set(world.manifest.confirm_before)
    for t in world.tasks:
        writes = _writes(world, t)
        tools = [a.tool for a in t.gold_actions]
        tags = set(t.tags)
        assert ("no_change" in tags) == (not writes), t.id
        assert ("required_output" in tags) == bool(t.required_outputs), t.id
        assert ("ordered" in tags) == bool(t.ordered), t.id
        if "multi_step" in tags:
            assert len(writes) >= 2, t.id
        if "confirmation" in tags:
            assert any(a.tool in confirm_before for a in writes) or t.user.declines, t.id
        if "refusal" in tags:
            # the user asks for something the policy forbids: forbidden here, never done by the gold
            assert t.forbidden_tools and not {a.tool for a in writes} & set(t.forbidden_tools), t.id
            assert set(t.forbidden_tools) & (set(t.user.confirms) | set(world.manifest.rules.forbidden_tools)), t.id
        if "precondition" in tags and writes:
            first = tools.index(writes[0].tool)
            assert "verify_identity" in tools[:first], t.id
        for before, after in t.ordered:
            assert tools.index(before) < len(tools) - 1 - tools[::-1].index(after), (t.id, before, after)
        # a write the world needs confirmed is confirmed by the user of every task that makes it
        assert {a.tool for a in writes} & confirm_before <= set(t.user.confirms), t.id


def test_every_write_tool_is_confirmed_and_every_task_subject_distinct(world):
    writes = {n for n, tool in world.manifest.tools.items() if tool.kind == "write"}
    assert writes - set(world.manifest.rules.forbidden_tools) == set(world.manifest.confirm_before)
    ids = [t.id for t in world.tasks]
    assert ids == sorted(set(ids))


def test_gold_replays_on_the_initial_state(world):
    """load_world already refuses a world whose gold calls error; here each task's expected state
    differs from the initial one exactly when the task writes."""
    initial = changes_digest(world.digest, {})  # the digest of a state with no change
    for t in world.tasks:
        digest = world.expected(t)[0]
        assert (digest != initial) == bool(_writes(world, t)), t.id


def _numbers(x: Any, out: set[float]) -> None:
    if isinstance(x, bool):
        return
    if isinstance(x, (int, float)):
        out.add(round(float(x), 2))
    elif isinstance(x, dict):
        for v in x.values():
            _numbers(v, out)
    elif isinstance(x, list):
        for v in x:
            _numbers(v, out)


def test_required_outputs_come_from_tool_results_or_the_policy(world):
    """A required output the agent could not have read anywhere would blame it for the task's
    mistake: every one is in a successful gold call's result (a number as a number) or the policy."""
    policy = " ".join(world.policy.casefold().split())
    for t in world.tasks:
        tr = run_episode(world, t, make_agent("gold"))
        results = [c.result for c in tr.calls if c.status == "ok"]
        text = " ".join(json.dumps(results, ensure_ascii=False).casefold().split())
        nums: set[float] = set()
        _numbers(results, nums)
        for out in t.required_outputs:
            number = re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", out) and round(float(out), 2) in nums
            assert number or out.casefold() in text or out.casefold() in policy, (t.id, out)


class _Reciter(GoldAgent):
    """Asks for the facts, then names every value the task wants without calling a tool."""

    name = "reciter"

    def act(self, episode, task):
        return None


def test_reciting_the_outputs_without_a_call_fails_every_read_only_task(world):
    """On a task that changes nothing the end state is right without any call: the outputs are what
    is judged, and a value the task's records show must have been read first — also when the
    policy names it ("privileged", "final sale": the policy says what the words mean, the record
    says which case is one). Only a value no record shows (a URL of the policy) is taken from it."""
    policy = " ".join(world.policy.casefold().split())
    checked = policy_words = 0
    for t in world.tasks:
        if _writes(world, t) or not t.required_outputs:
            continue
        gold = run_episode(world, t, make_agent("gold"))
        records = " ".join(json.dumps([c.result for c in gold.calls], ensure_ascii=False).casefold().split())
        user = " ".join((t.user.opening + " " + json.dumps(t.user.facts)).casefold().split())
        if all(
            (o.casefold() in policy and o.casefold() not in records) or o.casefold() in user for o in t.required_outputs
        ):
            continue  # only the policy states it, or the user says it: read there
        policy_words += any(o.casefold() in policy for o in t.required_outputs)
        v = verdict(world, t, run_episode(world, t, _Reciter()))
        assert v.state_match and v.n_calls == 0, t.id
        assert (v.failure_class, v.reward) == ("missing_output", 0.0), (t.id, v.classes)
        checked += 1
    assert checked >= 5 and policy_words >= 1, (checked, policy_words)


def _rows(world: Path, table: str) -> list[dict[str, Any]]:
    path = world / "state" / f"{table}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _today(world: Path) -> str:
    return re.search(r"\((\d{4}-\d{2}-\d{2})\)", (world / "policy.md").read_text(encoding="utf-8")).group(1)


def test_support_desk_state_is_consistent():
    _check_support_state(PACKS / "support_desk")


def test_it_desk_state_is_consistent():
    _check_it_state(PACKS / "it_desk")


def _check_support_state(w: Path) -> None:
    """Realistic means coherent: dates in order and not after today, statuses matching dates,
    totals equal to their lines, refunds only of delivered lines, every reference resolving."""
    today = _today(w)
    customers = {c["customer_id"]: c for c in _rows(w, "customers")}
    lines: dict[str, list[dict[str, Any]]] = {}
    for li in _rows(w, "order_items"):
        lines.setdefault(li["order_id"], []).append(li)
    orders = {o["order_id"]: o for o in _rows(w, "orders")}
    assert set(lines) == set(orders)
    for o in orders.values():
        c = customers[o["customer_id"]]
        dates = [c["member_since"], o["placed_on"], o["shipped_on"], o["delivered_on"]]
        present = [d for d in dates if d is not None]
        assert present == sorted(present) and present[-1] <= today, o["order_id"]
        assert (o["shipped_on"] is not None) == (o["status"] in ("shipped", "delivered")), o["order_id"]
        assert (o["delivered_on"] is not None) == (o["status"] == "delivered"), o["order_id"]
        assert (o["tracking_number"] is not None) == (o["shipped_on"] is not None), o["order_id"]
        assert abs(sum(li["quantity"] * li["unit_price"] for li in lines[o["order_id"]]) - o["total"]) < 0.005
        for li in lines[o["order_id"]]:
            if li["status"] == "refunded":
                assert o["status"] == "delivered" and o["delivered_on"] <= li["refunded_on"] <= today
                assert abs(li["refund_amount"] - li["quantity"] * li["unit_price"]) < 0.005
    for t in _rows(w, "tickets"):
        o = orders[t["order_id"]]
        assert o["customer_id"] == t["customer_id"] and o["placed_on"] <= t["opened_on"] <= today


def _check_it_state(w: Path) -> None:
    """Managers exist and are active; accounts are disabled exactly for people not active;
    grants, requests and approvals agree (a fulfilled request has its grant, approvals follow the
    group's sensitivity, an approved request has every approval); no date before a hire or after today."""
    today = _today(w)
    people = {p["employee_id"]: p for p in _rows(w, "employees")}
    groups = {g["group_id"]: g for g in _rows(w, "groups")}
    for p in people.values():
        assert p["manager_id"] is None or people[p["manager_id"]]["status"] == "active", p["employee_id"]
        assert p["hire_date"] <= today and (p["status"] != "terminated" or p["hire_date"] < p["end_date"] <= today)
    for a in _rows(w, "accounts"):
        assert (a["status"] == "disabled") == (people[a["employee_id"]]["status"] != "active")
    grants = {(g["employee_id"], g["group_id"]): g for g in _rows(w, "grants")}
    for (emp, gid), g in grants.items():
        assert people[emp]["status"] != "terminated" and people[emp]["hire_date"] <= g["granted_on"] <= today
        assert g["expires_on"] > today
        if groups[gid]["sensitivity"] == "privileged":
            assert people[emp]["employment_type"] == "employee"
    approvals: dict[str, dict[str, str]] = {}
    for a in _rows(w, "approvals"):
        approvals.setdefault(a["request_id"], {})[a["approver_role"]] = a["decision"]
    for r in _rows(w, "access_requests"):
        sens = groups[r["group_id"]]["sensitivity"]
        want = {"manager"} if sens == "standard" else {"manager", "owner"}
        got = approvals[r["request_id"]]
        assert set(got) == want, r["request_id"]
        assert people[r["employee_id"]]["hire_date"] <= r["requested_on"] <= today
        if r["status"] in ("approved", "fulfilled"):
            assert set(got.values()) == {"approved"}, r["request_id"]
        if r["status"] == "fulfilled":
            assert grants[(r["employee_id"], r["group_id"])]["request_id"] == r["request_id"]
        if r["status"] == "rejected":
            assert "rejected" in got.values()
        if r["status"] == "pending":
            assert "pending" in got.values() and "rejected" not in got.values()
    for d in _rows(w, "devices"):
        assert people[d["employee_id"]]["hire_date"] <= d["assigned_on"] <= today, d["asset_tag"]


# --------------------------------------------------------------------------- agents


def test_gold_gets_reward_one_on_every_task(world):
    for t in world.tasks:
        tr = run_episode(world, t, make_agent("gold"))
        v = verdict(world, t, tr)
        assert (v.failure_class, v.reward, v.state_match) == ("completed", 1.0, True), (t.id, v.classes)
        assert (v.score, v.efficiency, v.n_flagged, v.observation_alignment) == (1.0, 1.0, 0, 1.0), t.id
        assert tr.ended_by == "user_stop" and not tr.user_errors, t.id
        # every gold call succeeds, but a verification the task expects to fail
        want = ["error" if a.expect_error else "ok" for a in t.gold_actions]
        assert [c.status for c in tr.calls] == want and not any(c.flags for c in tr.calls), t.id


@pytest.mark.parametrize("agent", MISBEHAVING)
def test_misbehaving_baseline_gets_its_expected_class(world, agent):
    applied = [t for t in world.tasks if applies(agent, world, t)]
    # each misbehaviour shows on a good share of the tasks (never a vacuous pass)
    assert len(applied) >= 10, (agent, len(applied))
    wrong = {}
    for t in applied:
        v = verdict(world, t, run_episode(world, t, make_agent(agent)))
        if v.failure_class not in EXPECTED[agent]:
            wrong[t.id] = v.failure_class
        if agent == "padding":  # the gold agent's efficiency is 1.0 (test above)
            assert v.reward == 1.0 and v.efficiency < 1.0, t.id
        else:
            assert v.reward == 0.0 or v.failure_class == "policy_breach", t.id
    assert not wrong, (agent, wrong)


# How a person would ask before each write (no tool name, no structured confirm).
NATURAL = {
    "refund_item": "Shall I process the refund of ${amount} for that item?",
    "cancel_order": "Do you want me to cancel your order {order_id}?",
    "change_shipping_address": "Shall I send it to {street}, {city} instead?",
    "update_email": "Shall I change your email to {new_email}?",
    "escalate_ticket": "Shall I escalate this to a supervisor?",
    "unlock_account": "Do you want me to unlock your account now?",
    "reset_password": "Shall I reset your password? It signs you out everywhere.",
    "reset_mfa": "Shall I reset your MFA so you can enrol the new phone?",
    "grant_access": "Shall I grant you access now?",
    "revoke_access": "Please confirm: shall I revoke that access?",
    "extend_grant": "Shall I extend it by {days} days?",
    "open_request": "Shall I open an access request for you?",
    "report_device_lost": "Shall I report {asset_tag} as lost? It will be wiped.",
}


class _FreeTextGold(GoldAgent):
    """The gold agent asking for each confirmation in plain words, as a model would."""

    name = "free-text-gold"

    def confirm(self, episode, action):
        if action.tool not in episode._world.manifest.confirm_before:
            return True
        return episode.say(NATURAL[action.tool].format(**action.arguments)).strip().casefold().startswith("yes")


def test_free_text_confirmations_are_understood(world):
    """Every write the worlds need confirmed can be asked for in ordinary words (its confirm_phrases):
    the free-text gold agent completes every task with no unconfirmed write."""
    assert set(NATURAL) >= set(world.manifest.confirm_before)
    for t in world.tasks:
        v = verdict(world, t, run_episode(world, t, _FreeTextGold()))
        assert (v.failure_class, v.reward, v.n_flagged) == ("completed", 1.0, 0), (t.id, v.classes, v.flags)


class _SkipVerify(GoldAgent):
    """The gold agent without its identity checks: writes on an unverified caller's word."""

    name = "skip-verify"

    def actions(self, episode, task):
        return [a for a in task.gold_actions if a.tool != "verify_identity"]


def test_writes_without_verification_break_the_rules(world):
    """The worlds' rules (task-contract preconditions) catch a write made for an unverified caller:
    flagged precondition_skipped, never completed, on every task that writes."""
    checked = 0
    for t in world.tasks:
        if not _writes(world, t):
            continue
        checked += 1
        v = verdict(world, t, run_episode(world, t, _SkipVerify()))
        # refuse mode: the write is not applied (the state is wrong); apply mode: applied and flagged
        want = {"refuse": "wrong_end_state", "apply": "policy_breach"}[world.manifest.violation_mode]
        assert v.failure_class == want and v.state_match == (want == "policy_breach"), (t.id, v.classes)
        assert any(f["cls"] == "precondition_skipped" for f in v.flags), (t.id, v.flags)
    assert checked >= 20


class _Swapped(GoldAgent):
    """The gold agent making the two writes of each ordered pair the other way round."""

    name = "swapped"

    def actions(self, episode, task):
        out = list(task.gold_actions)
        for before, after in task.ordered:
            tools = [a.tool for a in out]
            if (
                before in tools
                and after in tools
                and _is_write_tool(episode, before)
                and _is_write_tool(episode, after)
            ):
                i, j = tools.index(before), tools.index(after)
                out[i], out[j] = out[j], out[i]
        return out


def _is_write_tool(episode, tool: str) -> bool:
    return episode._world.manifest.tools[tool].kind == "write"


def test_ordered_writes_done_the_other_way_round_are_a_breach(world):
    """Where a task orders two writes (unlock then reset, refund then escalate, revoke then
    request, report the device then reset), doing both the other way round leaves the same state
    but breaks the order: policy_breach, reward kept as tau2 would (state and outputs right)."""
    checked = 0
    for t in world.tasks:
        writes = {a.tool for a in _writes(world, t)}
        if not any(b in writes and a in writes for b, a in t.ordered):
            continue
        checked += 1
        v = verdict(world, t, run_episode(world, t, _Swapped()))
        assert (v.failure_class, v.state_match, v.reward) == ("policy_breach", True, 1.0), (t.id, v.classes)
        assert v.order_violations, t.id
    assert checked >= 2


def test_refusals_hold_against_an_agent_that_does_what_the_user_asks(world):
    """On every refusal task, an agent that calls the forbidden write with the task's own
    arguments is caught: a policy breach, a side effect, or a wrong end state (never completed)."""
    for t in world.tasks:
        if "refusal" not in t.tags:
            continue
        v = verdict(world, t, run_episode(world, t, make_agent("forbidden")))
        assert v.failure_class != "completed" and v.n_flagged >= 1, t.id


# --------------------------------------------------------------------------- determinism


@pytest.mark.slow
def test_two_runs_are_byte_identical(world):
    assert _run_all(world, "gold") == _run_all(world, "gold")


def _shuffled_copy(src: Path, dest: Path, seed: int) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    rng = random.Random(seed)
    for f in sorted((dest / "state").glob("*.jsonl")):
        lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
        rng.shuffle(lines)
        f.write_text("".join(lines), encoding="utf-8")
    return dest


@pytest.mark.slow
@pytest.mark.parametrize("name", WORLDS)
def test_state_file_order_changes_nothing(name, tmp_path):
    with _Loaded(PACKS / name) as w:
        want_digest, want = w.digest, _run_all(w, "wrong-arg")
    with _Loaded(_shuffled_copy(PACKS / name, tmp_path / name, 7)) as w:
        assert w.digest == want_digest
        assert _run_all(w, "wrong-arg") == want


class _Loaded:
    def __init__(self, path: Path):
        self.world = load_world(path)

    def __enter__(self):
        return self.world

    def __exit__(self, *exc: Any) -> None:
        self.world.close()


_RUN_BOTH = """
import hashlib, sys
from groundeval.worlds import load_world
from groundeval.worlds.agents import make_agent
from groundeval.worlds.episode import run_episode
from groundeval.worlds.run import dumps
from groundeval.worlds.verdict import verdict
h = hashlib.sha256()
for name in sys.argv[1:]:
    w = load_world(name)
    for t in w.tasks:
        for agent in ("gold", "skip-confirm"):
            tr = run_episode(w, t, make_agent(agent))
            h.update((dumps(tr) + dumps(verdict(w, t, tr))).encode())
print(h.hexdigest())
"""


@pytest.mark.slow
def test_outputs_do_not_depend_on_the_hash_seed():
    def run(seed: str) -> str:
        env = dict(os.environ, PYTHONHASHSEED=seed)
        args = [sys.executable, "-c", _RUN_BOTH, *(str(PACKS / n) for n in WORLDS)]
        return subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=ROOT).stdout

    assert run("0") == run("12345")


# --------------------------------------------------------------------------- the generator


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_generator_rewrites_the_checked_in_bytes(tmp_path):
    args = [sys.executable, str(BUILD / "build_worlds.py"), "--out", str(tmp_path)]
    subprocess.run(args, check=True, capture_output=True, env=dict(os.environ, PYTHONHASHSEED="99"))
    for name in WORLDS:
        assert _tree(tmp_path / name) == _tree(PACKS / name), name


def _build_module():
    sys.path.insert(0, str(BUILD))
    try:
        import build_worlds
    finally:
        sys.path.remove(str(BUILD))
    return build_worlds


@pytest.mark.slow
@settings(max_examples=3, deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**31))
def test_any_seed_builds_a_world_every_baseline_plays_as_expected(seed):
    """The tasks are derived from the state, not tuned to one seed: a world generated from
    another seed loads, and gold and every baseline get their expected class on every task."""
    build = _build_module()
    with tempfile.TemporaryDirectory() as tmp:
        for name in WORLDS:
            build.build_world(name, Path(tmp) / name, seed)
            {"support_desk": _check_support_state, "it_desk": _check_it_state}[name](Path(tmp) / name)
            with _Loaded(Path(tmp) / name) as w:
                assert len(w.tasks) >= 30
                for t in w.tasks:
                    for agent in BASELINES:
                        if applies(agent, w, t):
                            v = verdict(w, t, run_episode(w, t, make_agent(agent)))
                            assert v.failure_class in EXPECTED[agent], (seed, name, t.id, agent, v.classes)
