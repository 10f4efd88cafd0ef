"""Invariants of the world engine, by hypothesis: isolation of concurrent episodes, replay of a
trace's writes, stable verdicts, byte-identical runs whatever PYTHONHASHSEED."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.worlds import load_world
from groundeval.worlds.episode import WorldEpisode
from groundeval.worlds.model import WorldTrace
from groundeval.tasks.score import canonical_json
from groundeval.worlds.verdict import normalise, recompute_flags, replay_writes, verdict

SHOP = Path(__file__).resolve().parent / "shop"
ORDERS = ["O-1001", "O-1002", "O-1003", "O-1004", "O-9"]

_call = st.one_of(
    st.builds(lambda o: ("get_order", {"order_id": o}), st.sampled_from(ORDERS)),
    st.builds(
        lambda o, r: ("refund_order", {"order_id": o, "reason": r}),
        st.sampled_from(ORDERS),
        st.sampled_from(["damaged", "other", "bogus"]),
    ),
    st.builds(lambda o: ("cancel_order", {"order_id": o}), st.sampled_from(ORDERS)),
    st.builds(lambda o, n: ("open_ticket", {"order_id": o, "note": n}), st.sampled_from(ORDERS), st.text(max_size=8)),
    st.builds(lambda c: ("delete_customer", {"customer_id": c}), st.sampled_from(["C-1", "C-2"])),
    st.just(("nope", {})),
)
_step = st.one_of(_call, st.builds(lambda t: ("say", t), st.sampled_from(["refund_order", "cancel_order", None])))


@pytest.fixture(scope="module")
def world():
    w = load_world(SHOP)
    yield w
    w.close()


def _play(world, steps, task_id="ticket-and-refund") -> WorldTrace:
    ep = WorldEpisode(world, world.task(task_id))
    for kind, arg in steps:
        if kind == "say":
            ep.say("Shall I proceed?" if arg is None else f"Shall I {arg}?", confirm={"tool": arg} if arg else None)
        else:
            ep.call(kind, arg)
    return ep.finish()


def _apply_mode(tmp_path_factory):
    import shutil

    dest = tmp_path_factory.mktemp("apply") / "shop"
    shutil.copytree(SHOP, dest, ignore=shutil.ignore_patterns("__pycache__"))
    m = dest / "world.yaml"
    m.write_text(m.read_text().replace("violation_mode: refuse", "violation_mode: apply"))
    return dest


@pytest.fixture(scope="module")
def apply_world(tmp_path_factory):
    w = load_world(_apply_mode(tmp_path_factory))
    yield w
    w.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_step, max_size=12), mode=st.sampled_from(["refuse", "apply"]))
def test_replaying_recorded_writes_reproduces_final_digest(world, apply_world, steps, mode):
    w = world if mode == "refuse" else apply_world
    trace = _play(w, steps)
    digest, changes, problems = replay_writes(w, trace.calls)
    assert problems == [] and digest == trace.final_digest
    # the verdict's one-pass flags are the ones the episode checked call by call
    recomputed = recompute_flags(w, w.task("ticket-and-refund"), trace)
    assert [[f.model_dump() for f in c.flags] for c in trace.calls] == [
        [f.model_dump() for f in fs] for fs in recomputed
    ]
    # and the per-call diffs add up to the final changes
    rows: dict[str, dict] = {}
    for c in trace.calls:
        for table, d in c.diff.items():
            for r in d.added:
                rows.setdefault(table, {})[tuple(r[k] for k in w.state.keys[table])] = r
            for r in d.removed:
                rows.setdefault(table, {})[tuple(r[k] for k in w.state.keys[table])] = None
            for ch in d.changed:
                rows.setdefault(table, {})[tuple(ch.key[k] for k in w.state.keys[table])] = ch.after
    for table, now in changes.items():
        for key_json, row in now.items():
            import json

            assert rows[table][tuple(json.loads(key_json))] == row


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_step, max_size=12), task=st.sampled_from(["refund-damaged", "status-only", "ticket-and-refund"]))
def test_rescoring_a_trace_gives_the_same_verdict(world, steps, task):
    trace = _play(world, steps, task)
    first = verdict(world, world.task(task), trace)
    again = verdict(world, world.task(task), WorldTrace.model_validate_json(trace.model_dump_json()))
    assert first == again
    assert 0.0 <= first.s_adj <= first.score <= 1.0 and first.reward in (0.0, 1.0)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=st.lists(st.lists(_call, min_size=1, max_size=6), min_size=2, max_size=3))
def test_concurrent_episodes_never_see_each_others_writes(world, plans):
    alone = [_play(world, p) for p in plans]  # each plan run by itself first
    barrier = threading.Barrier(len(plans))
    got: list = [None] * len(plans)
    seen: list = [None] * len(plans)

    def worker(i):
        ep = WorldEpisode(world, world.task("ticket-and-refund"))
        barrier.wait()
        views = []
        for tool, args in plans[i]:
            ep.call(tool, args)
            views.append(ep._state.snapshot())  # what this episode sees after each of its calls
            barrier_wait_soft()
        seen[i] = views
        got[i] = ep.finish()

    def barrier_wait_soft():
        threading.Event().wait(0)  # yield: other threads' calls interleave

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(plans))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, plan in enumerate(plans):
        assert got[i].final_digest == alone[i].final_digest
        assert [c.model_dump() for c in got[i].calls] == [c.model_dump() for c in alone[i].calls]
        ref = WorldEpisode(world, world.task("ticket-and-refund"))
        for (tool, args), view in zip(plan, seen[i]):
            ref.call(tool, args)
            assert ref._state.snapshot() == view
        ref.finish()


@pytest.mark.slow
def test_run_files_byte_identical_across_hash_seeds(tmp_path):
    outs = []
    for seed, jobs in (("0", "1"), ("12345", "2")):
        out = tmp_path / f"run-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        cmd = [sys.executable, "-m", "groundeval.cli.main", "run", str(SHOP), "--agent", "padding"]
        cmd += ["--out", str(out), "--trials", "2", "-j", jobs, "-q"]
        subprocess.run(cmd, check=True, env=env, capture_output=True)
        outs.append(out)
    for name in ("traces.jsonl", "verdicts.jsonl", "report.json", "report.md", "report.html"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


_words = st.sampled_from(
    [
        "order",
        "id",
        "number",
        "reason",
        "email",
        "confirm",
        "shall I",
        "refund",
        "cancel",
        "anything else",
        "proceed",
        "yes",
        "no",
        "O-1001",
        "please",
        "the",
        "your",
        "order_id",
        "?",
        ".",
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    task=st.sampled_from(
        ["refund-damaged", "cancel-pending", "status-only", "refund-not-delivered", "ticket-and-refund"]
    ),
    messages=st.lists(
        st.tuples(
            st.lists(_words, max_size=8).map(" ".join),
            st.one_of(st.none(), st.sampled_from(["refund_order", "cancel_order", "open_ticket"])),
            st.booleans(),
        ),
        max_size=6,
    ),
)
def test_deterministic_user_never_says_what_its_task_does_not(world, task, messages):
    ep = WorldEpisode(world, world.task(task))
    for text, confirm, done in messages:
        ep.say(text, confirm={"tool": confirm} if confirm else None, done=done)
    assert ep.finish().user_errors == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_output_counts_once_its_read_came_before_it(shop, data):
    """The outputs said after every gold call count; said before the call that reads them, not (the
    same words, only their place in the episode moves): the verdict never credits an unread value."""
    tasks = [t for t in shop.tasks if t.required_outputs]
    task = data.draw(st.sampled_from(tasks))
    k = data.draw(st.integers(0, len(task.gold_actions)))
    ep = WorldEpisode(shop, task)
    ep.say("Could you tell me your " + ", ".join(task.user.facts) + "?")
    for a in task.gold_actions[:k]:
        ep.call(a.tool, a.arguments)
    ep.say("Status: " + "; ".join(task.required_outputs) + ".")
    for a in task.gold_actions[k:]:
        ep.call(a.tool, a.arguments)
    v = verdict(shop, task, ep.finish())
    if k == len(task.gold_actions):
        assert v.missing_outputs == [], (task.id, k)
    # an output counted must have been in a call result (or a write) before the message
    before = ep.calls[:k]
    for o in set(task.required_outputs) - set(v.missing_outputs):
        seen = normalise(canonical_json([c.result for c in before if c.status == "ok"]) + shop.policy)
        assert normalise(o) in seen or any(c.kind == "write" and c.status == "ok" for c in before), (task.id, k, o)
