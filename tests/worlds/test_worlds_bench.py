"""The world benchmark runs end to end on a small generated world (figures not asserted)."""

from __future__ import annotations

from groundeval.bench.worlds import generate_world, render_worlds, run_worlds_bench


def test_generated_world_is_deterministic_and_gold_solves_it(tmp_path):
    a = generate_world(tmp_path / "a", 0.05)
    b = generate_world(tmp_path / "b", 0.05)
    for rel in ("world.yaml", "tasks.jsonl", "state/orders.jsonl", "state/customers.jsonl"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes()
    size = sum(p.stat().st_size for p in (a / "state").iterdir())
    assert size >= 50_000
    result = run_worlds_bench([0.05], episodes=10, repeat=1, workdir=tmp_path / "w", probes=10)
    row = result["sizes"][0]
    assert row["gold_reward"] == 1.0 and row["episodes_per_s"] > 0 and row["setup_ms"] > 0
    assert "eps/s" in render_worlds(result)
