"""Agreement with τ²'s own evaluator (``evaluate_simulation``): the gold trajectory and each
perturbation get the same reward from τ² and from groundeval's replay.

CI runs a fixed sample per domain (every task of mock and telecom's first 12; retail's and
airline's first 3 — their evaluation reloads a 3-7 MB database per call); GROUNDEVAL_TAU2_FULL=1
runs every task of every domain (the numbers are in docs/trajectories.md)."""

from __future__ import annotations

import os

import pytest

FULL = os.environ.get("GROUNDEVAL_TAU2_FULL") == "1"
SAMPLE = {"mock": None, "telecom": 12, "retail": 3, "airline": 3}


@pytest.mark.slow
@pytest.mark.parametrize("domain", sorted(SAMPLE))
def test_groundeval_and_tau2_give_the_same_reward(domain):
    from groundeval.worlds.tau2 import load_tau2_world
    from groundeval.trajectories.tau2_agreement import agree

    w = load_tau2_world(domain)
    ids = [t.id for t in w.tasks]
    n = None if FULL else SAMPLE[domain]
    rows = agree(w, ids if n is None else ids[:n])
    graded = [r for r in rows if r["tau2_error"] is None]
    crashed = [r for r in rows if r["tau2_error"] is not None]
    bad = [r for r in graded if not r["agree"]]
    assert not bad, bad[:5]
    # gold: 1 in both, except where tau2's own criteria fail its gold (counted, both agree)
    gold = [r for r in graded if r["variant"] == "gold"]
    assert gold and sum(r["tau2"] == 1.0 for r in gold) >= len(gold) - 1
    # every perturbation family is exercised, and a run tau2 grades 1 with a breach says so
    assert {r["variant"].split(":")[0] for r in rows} >= {"gold", "drop_write", "forbidden"}
    assert all(r["more"] for r in graded if r["variant"] == "forbidden" and r["tau2"] == 1.0)
    # tau2's evaluator raised (an assertion of its own on a state it does not expect): groundeval grades 0
    assert all(r["groundeval"] == 0.0 for r in crashed)
