"""The local bytes at organisation scale: a 100K-event synthetic org (``groundeval synth --events
100000``), run by the oracle and the keyword agent (BM25 search on the read-only store) and scored,
locally and on Ray. Minutes of CPU on a 2-core machine, so opt-in: GROUNDEVAL_RAY_100K=1
(measured once for docs/ray.md; run with -s to see the timings)."""

from __future__ import annotations

import os
import time

import pytest
from test_ray_identity import clear_timings, cli, no_timings, score_both

from groundeval import api

pytestmark = pytest.mark.skipif(
    os.environ.get("GROUNDEVAL_RAY_100K") != "1", reason="minutes on 2 cores: set GROUNDEVAL_RAY_100K=1 to run it"
)


def test_100k_event_org_gives_the_local_bytes(ray_backend, tmp_path, capsys):
    org, db = tmp_path / "org", tmp_path / "org.duckdb"
    t0 = time.perf_counter()
    code, _o, err = cli(capsys, "synth", org, "--events", "100000")
    assert code == 0, err
    timings = {"synth": time.perf_counter() - t0}
    questions = None
    for agent in ("oracle", "keyword"):
        t0 = time.perf_counter()
        local = api.run(org, agent, tmp_path / f"local-{agent}", db=db, questions=questions, pack=org)
        timings[f"local {agent}"] = time.perf_counter() - t0
        questions = questions or local.parent / "questions.json"  # generated once, by the first run
        t0 = time.perf_counter()
        remote = api.run(
            org, agent, tmp_path / f"ray-{agent}", db=db, questions=questions, pack=org, backend=ray_backend
        )
        timings[f"ray {agent}"] = time.perf_counter() - t0
        assert no_timings(remote) == no_timings(local), agent
        clear_timings(local)
        t0 = time.perf_counter()
        outs = score_both(capsys, local, questions, tmp_path / f"s-{agent}")
        timings[f"score both {agent}"] = time.perf_counter() - t0
        assert outs["ray"] == outs["local"], agent
    with capsys.disabled():
        n = len(no_timings(remote))
        print(
            f"\n100K-event org, {n} questions: "
            + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
            + f"; load average {os.getloadavg()}"
        )
