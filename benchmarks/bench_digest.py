"""The contract digest's records part: one process against helper processes, beside a floor.

    python benchmarks/bench_digest.py PACK [--repeat 3]

Loads PACK once, then times, in this process, for events and artifacts: the floor (fetching
every record's text from DuckDB and ``json.loads`` of it), the digest by the reference
canonical form alone (Python's ``json``, the fast path turned off), the digest hashed in
this process (``workers=0``) and with 2 helper processes (``workers=2``). Prints wall and CPU
(this process; the helpers' CPU is read from their exit, ``RUSAGE_CHILDREN``) per record,
the load average, and checks both digests agree.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time

from groundeval.store import digest as D
from groundeval.store.digest import records_digest
from groundeval.store.store import Store

SQLS = {
    "events": ("SELECT raw::VARCHAR FROM events", ()),
    "artifacts": ("SELECT id, subsystem, raw::VARCHAR FROM artifacts", ("id", "subsystem")),
}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(fn) -> tuple[float, float, object]:
    c0, k0, t0 = time.process_time(), _children_cpu(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0 + _children_cpu() - k0, out


def _floor(con, sql: str) -> int:
    cur = con.execute(sql)
    n = 0
    while rows := cur.fetchmany(32768):
        for row in rows:
            json.loads(row[-1])
        n += len(rows)
    return n


def _reference(con, sql: str, drop: tuple[str, ...]) -> str:
    """The digest with every record canonicalised by the reference (as before msgspec)."""
    fast, D.canonical_fast = D.canonical_fast, lambda text, drop=(): None
    try:
        return records_digest(con, sql, drop, workers=0)
    finally:
        D.canonical_fast = fast


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pack")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    store = Store.open(args.pack)
    con = store.con
    print(f"load average at start {os.getloadavg()[0]:.2f}; {len(os.sched_getaffinity(0))} cores")
    for name, (sql, drop) in SQLS.items():
        n = con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0]
        results: dict[str, list[tuple[float, float]]] = {
            "floor": [],
            "reference": [],
            "in process": [],
            "2 helpers": [],
        }
        digests = set()
        for _ in range(args.repeat):  # interleaved, so a change in the machine's load hits every variant
            wall, cpu, _ = _timed(lambda: _floor(con, sql))
            results["floor"].append((wall, cpu))
            wall, cpu, d = _timed(lambda: _reference(con, sql, drop))
            results["reference"].append((wall, cpu))
            digests.add(d)
            for label, workers in (("in process", 0), ("2 helpers", 2)):
                wall, cpu, d = _timed(lambda w=workers: records_digest(con, sql, drop, workers=w))
                results[label].append((wall, cpu))
                digests.add(d)
        assert len(digests) == 1, "the digests differ"
        print(f"{name}: {n:,} records")
        for label, runs in results.items():
            wall = statistics.median(w for w, _c in runs)
            cpu = statistics.median(c for _w, c in runs)
            print(f"  {label:>10}: median {wall:.2f} s wall ({wall * 1e6 / n:.1f} µs/record), {cpu:.2f} s CPU")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
