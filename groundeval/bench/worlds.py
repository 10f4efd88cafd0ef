"""``groundeval bench --worlds``: episode set-up cost and episodes per second on generated worlds.

A world of a given state size is generated deterministically (a shop: customers, orders with a
text column sized to reach the target, tickets; SQL tools; refund / cancel / status tasks). Per
size it measures, each as the median of ``repeat`` runs:

* ``load``      — ``load_world`` (files -> DuckDB, initial digest), once per process;
* ``lane``      — the one-off copy a concurrent slot needs (``CREATE TABLE AS`` of every table);
* ``setup``     — one episode's set-up: ``fork()`` (``BEGIN`` on a lane) + ``WorldEpisode(...)``,
  and its end (``ROLLBACK``); beside it what a per-episode ``CREATE TABLE AS`` copy would cost;
* ``episodes``  — gold agent + deterministic simulator, episodes/s (1 thread and 2 threads),
  without and with the verdict, and the CPU time of one episode (the figure a loaded machine
  does not distort).

Wall-clock figures live here only. The load average at start and end is reported with them.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

__all__ = ["generate_world", "render_worlds", "run_worlds_bench"]

_MANIFEST = """kind: world
version: 1
name: bench_shop
description: A generated shop world for the benchmark ({mb} MB of state).
policy: policy.md
violation_mode: refuse
tables:
  customers: {{source: state/customers.jsonl, key: [customer_id]}}
  orders: {{source: state/orders.jsonl, key: [order_id]}}
  tickets:
    source: state/tickets.json
    key: [ticket_id]
    columns: {{ticket_id: string, order_id: string, note: string}}
tools:
  get_order:
    kind: read
    description: Look up one order.
    arguments: {{order_id: {{type: string, required: true}}}}
    sql: SELECT order_id, customer_id, status, total FROM orders WHERE order_id = $order_id
    returns: one
  find_customer:
    kind: read
    description: Find a customer by email.
    arguments: {{email: {{type: string, required: true}}}}
    sql: SELECT customer_id, name FROM customers WHERE email = $email
    returns: one
  refund_order:
    kind: write
    description: Refund a delivered order.
    arguments:
      order_id: {{type: string, required: true}}
      reason: {{type: string, required: true, enum: [damaged, not_received, other]}}
    sql: UPDATE orders SET status = 'refunded', refund_reason = $reason WHERE order_id = $order_id AND status = 'delivered'
    expect_rows: 1
  cancel_order:
    kind: write
    description: Cancel a pending order.
    arguments: {{order_id: {{type: string, required: true}}}}
    sql: UPDATE orders SET status = 'cancelled' WHERE order_id = $order_id AND status = 'pending'
    expect_rows: 1
  open_ticket:
    kind: write
    description: Open a ticket.
    arguments: {{order_id: {{type: string, required: true}}, note: {{type: string, required: true}}}}
    sql: INSERT INTO tickets (ticket_id, order_id, note) VALUES ('T-' || $order_id, $order_id, $note)
    expect_rows: 1
rules:
  tools:
    refund_order: {{once_per: [order_id]}}
  decisions:
    - tool: refund_order
      required: false
      preconditions: [{{tool: get_order, arguments: {{order_id: {{same_as: order_id}}}}}}]
confirm_before: [refund_order, cancel_order]
tasks: tasks.jsonl
"""


def generate_world(folder: Path, mb: float, *, seed: int = 7, tasks: int = 60) -> Path:
    """Write a world of about ``mb`` MB of state into ``folder`` (deterministic for a seed)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "state").mkdir(exist_ok=True)
    (folder / "world.yaml").write_text(_MANIFEST.format(mb=mb), encoding="utf-8")
    (folder / "policy.md").write_text("Look up before changing; confirm refunds and cancellations.\n")
    (folder / "state" / "tickets.json").write_text("[]\n")
    target = int(mb * 1_000_000)
    words = ["blender", "kettle", "toaster", "mixer", "lamp", "chair", "desk", "phone", "cable", "mug"]
    orders, size, n = [], 0, 0
    statuses = ["delivered", "pending", "shipped"]
    while size < target:
        n += 1
        row = {
            "order_id": f"O-{n:07d}",
            "customer_id": f"C-{1 + n % max(1, n // 10 + 1):06d}",
            "status": statuses[n % 3],
            "total": round(rng.uniform(5, 2000), 2),
            "refund_reason": None,
            "notes": " ".join(rng.choice(words) for _ in range(12)),
        }
        line = json.dumps(row, sort_keys=True)
        size += len(line) + 1
        orders.append(line)
    n_customers = n // 10 + 1
    customers = [
        json.dumps({"customer_id": f"C-{i:06d}", "name": f"Customer {i}", "email": f"c{i}@example.com"}, sort_keys=True)
        for i in range(1, n_customers + 1)
    ]
    (folder / "state" / "orders.jsonl").write_text("\n".join(orders) + "\n", encoding="utf-8")
    (folder / "state" / "customers.jsonl").write_text("\n".join(customers) + "\n", encoding="utf-8")
    lines = []
    for i in range(tasks):
        k = rng.randrange(1, n + 1)
        oid = f"O-{k:07d}"
        status = statuses[k % 3]
        read = {"tool": "get_order", "arguments": {"order_id": oid}}
        if status == "delivered":
            gold = [read, {"tool": "refund_order", "arguments": {"order_id": oid, "reason": "damaged"}}]
            if i % 4 == 0:
                gold.append({"tool": "open_ticket", "arguments": {"order_id": oid, "note": "refund"}})
            confirms, out = ["refund_order"], ["refunded"]
        elif status == "pending":
            gold = [read, {"tool": "cancel_order", "arguments": {"order_id": oid}}]
            confirms, out = ["cancel_order"], ["cancelled"]
        else:
            gold, confirms, out = [read], [], ["shipped"]
        lines.append(
            json.dumps(
                {
                    "id": f"t{i:03d}",
                    "user": {"opening": "I need help with my order.", "facts": {"order_id": oid}, "confirms": confirms},
                    "gold_actions": gold,
                    "required_outputs": out,
                },
                sort_keys=True,
            )
        )
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _state_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in (folder / "state").iterdir()) / 1e6, 2)


def _median_time(fn: Callable[[], Any], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _bench_one(folder: Path, episodes: int, repeat: int, probes: int = 200) -> dict[str, Any]:
    from ..worlds import load_world
    from ..worlds.agents import GoldAgent
    from ..worlds.episode import WorldEpisode, run_episode
    from ..worlds.verdict import verdict

    loads = []
    world = None
    for _ in range(repeat):
        if world is not None:
            world.close()
        t0 = time.perf_counter()
        world = load_world(folder, check_gold=False)
        loads.append(time.perf_counter() - t0)
    assert world is not None
    try:
        t0 = time.perf_counter()
        world.state.warm(1)
        lane_s = time.perf_counter() - t0
        tasks = world.tasks
        for t in tasks:  # the expected states, as a run computes them once
            world.expected(t)

        def setup_once():
            ep = WorldEpisode(world, tasks[0])
            ep._state.close()

        setup = _median_time(setup_once, probes)

        def fork_only():
            st = world.state.fork()
            st.close()

        fork = _median_time(fork_only, probes)
        con = world.state._con
        cur = con.cursor()
        cur.execute("ATTACH ':memory:' AS ctas_probe")

        def ctas():
            for t in world.state.keys:
                cur.execute(f'CREATE OR REPLACE TABLE ctas_probe.main."{t}" AS SELECT * FROM memory.main."{t}"')

        ctas_s = _median_time(ctas, 5)
        cur.execute("DETACH ctas_probe")

        gold = GoldAgent()
        jobs = [tasks[i % len(tasks)] for i in range(episodes)]

        def run_serial(with_verdict: bool):
            for t in jobs:
                tr = run_episode(world, t, gold)
                if with_verdict:
                    verdict(world, t, tr)

        def run_threads(with_verdict: bool):
            def one(t):
                tr = run_episode(world, t, gold)
                if with_verdict:
                    verdict(world, t, tr)

            with ThreadPoolExecutor(max_workers=2) as pool:
                list(pool.map(one, jobs))

        world.state.warm(2)
        rates = {}
        for label, fn, v in (
            ("episodes_per_s", run_serial, False),
            ("episodes_per_s_with_verdict", run_serial, True),
            ("episodes_per_s_2_threads", run_threads, False),
        ):
            rates[label] = round(episodes / _median_time(lambda fn=fn, v=v: fn(v), repeat), 1)
        cpu0 = time.process_time()
        run_serial(False)
        cpu_ms = (time.process_time() - cpu0) / len(jobs) * 1000
        rewards = [verdict(world, t, run_episode(world, t, gold)).reward for t in tasks]
        return {
            "state_mb": _state_mb(folder),
            "rows": sum(
                world.state._con.execute(f'SELECT count(*) FROM memory.main."{t}"').fetchone()[0]
                for t in world.state.keys
            ),
            "load_s": round(statistics.median(loads), 3),
            "lane_copy_ms": round(lane_s * 1000, 2),
            "setup_ms": round(setup * 1000, 3),
            "fork_ms": round(fork * 1000, 3),
            "ctas_copy_ms": round(ctas_s * 1000, 2),
            **rates,
            "cpu_ms_per_episode": round(cpu_ms, 3),
            "gold_reward": sum(rewards) / len(rewards),
        }
    finally:
        world.close()


def run_worlds_bench(
    sizes_mb: list[float],
    *,
    episodes: int = 300,
    repeat: int = 3,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    probes: int = 200,
) -> dict[str, Any]:
    from .run import machine

    load_start = os.getloadavg()
    out: dict[str, Any] = {"machine": machine(), "load_avg_start": [round(x, 2) for x in load_start], "sizes": []}
    with tempfile.TemporaryDirectory(prefix="ge-worlds-bench-") as tmp:
        root = workdir or Path(tmp)
        for mb in sizes_mb:
            if progress:
                progress(f"world of {mb} MB: generating")
            folder = generate_world(root / f"world-{mb}mb", mb)
            if progress:
                progress(f"world of {mb} MB: measuring ({episodes} episodes x {repeat})")
            out["sizes"].append(_bench_one(folder, episodes, repeat, probes))
    out["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def render_worlds(result: dict[str, Any]) -> str:
    cols = [
        ("state MB", "state_mb"),
        ("rows", "rows"),
        ("load s", "load_s"),
        ("lane copy ms", "lane_copy_ms"),
        ("setup ms", "setup_ms"),
        ("fork ms", "fork_ms"),
        ("CTAS copy ms", "ctas_copy_ms"),
        ("eps/s", "episodes_per_s"),
        ("eps/s +verdict", "episodes_per_s_with_verdict"),
        ("eps/s 2 thr", "episodes_per_s_2_threads"),
        ("CPU ms/episode", "cpu_ms_per_episode"),
        ("gold reward", "gold_reward"),
    ]
    lines = ["| " + " | ".join(c for c, _ in cols) + " |", "|" + "---:|" * len(cols)]
    for r in result["sizes"]:
        lines.append("| " + " | ".join(str(r[k]) for _, k in cols) + " |")
    lines.append(
        f"\nload average {result['load_avg_start']} -> {result['load_avg_end']} · "
        f"{result['machine']['cores']} cores · {result['machine']['cpu']}"
    )
    return "\n".join(lines)
