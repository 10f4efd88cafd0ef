"""Scoring throughput by backend: local, and Ray with 1 and 2 workers (needs the ray extra).

    .venv-ray/bin/python benchmarks/bench_ray.py [--n 20000] [--repeat 3] [--workers 1,2] [--json out.json]
    .venv-ray/bin/python benchmarks/bench_ray.py --episodes PACK [--agent keyword] [--repeat 3]

Writes the synthetic traces of ``bench_scoring.py`` (all tracks, ~8 calls each) to a
temporary JSONL file and times ``backend.rescore`` over it — what ``groundeval score
--backend ...`` does before aggregating: read, parse, check, score, merge in file order.
Ray starts once per worker count, outside the timed part (its start-up is reported apart).
The floor is reading the file's lines alone, in the same run. Prints medians, the driver's
peak RSS and the load average before and after.

``--episodes PACK`` times ``api.run`` instead (episodes per second: the agent through the gated
runtime) with the pack's questions generated once and its store in one ``--db`` file: local with
``--concurrency`` 1 and 2, and Ray with each worker count (actors started inside the timed part).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scoring import build  # noqa: E402

from groundeval.distributed import LocalBackend  # noqa: E402
from groundeval.trace.io import iter_trace_lines  # noqa: E402


def _timed(fn, repeat: int) -> dict:
    walls, cpus, counts = [], [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        counts.append(fn())
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    wall = statistics.median(walls)
    return {
        "n": counts[0],
        "median_s": round(wall, 3),
        "runs_s": [round(w, 3) for w in walls],
        "driver_cpu_s": round(statistics.median(cpus), 3),
        "traces_per_s": round(counts[0] / wall),
    }


def episodes(args) -> dict:
    from groundeval import api
    from groundeval.distributed.ray_backend import RayBackend

    results: dict = {"pack": args.episodes, "agent": args.agent, "load_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory() as tmp:
        db, first = (
            Path(tmp) / "store.duckdb",
            api.run(args.episodes, args.agent, Path(tmp) / "warm", db=Path(tmp) / "store.duckdb"),
        )
        questions = first.parent / "questions.json"
        n = len(first.read_text().splitlines())
        runs = 0

        def one(**kw) -> int:
            nonlocal runs
            runs += 1
            api.run(
                args.episodes, args.agent, Path(tmp) / f"r{runs}", questions=questions, pack=args.episodes, db=db, **kw
            )
            return n

        for c in (1, 2):
            results[f"local_c{c}"] = _timed(lambda: one(concurrency=c), args.repeat)
        for w in (int(x) for x in args.workers.split(",")):
            be = RayBackend(workers=w)
            assert be.workers == w
            try:
                one(backend=be)  # warm
                results[f"ray_{w}"] = _timed(lambda: one(backend=be), args.repeat)
            finally:
                be.close()
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    results["driver_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    for key, r in results.items():
        if isinstance(r, dict):
            print(
                f"{key:10} {r['n'] / r['median_s']:>8.1f} episodes/s  median {r['median_s']:.2f} s of "
                f"{r['runs_s']} ({r['n']} episodes)  driver CPU {r['driver_cpu_s']:.2f} s"
            )
    print(
        f"driver peak RSS {results['driver_peak_rss_mb']} MB · load average before {results['load_before']} "
        f"after {results['load_after']}"
    )
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--chunk", type=int, default=None, help="Trace lines per Ray task (default: the backend's).")
    ap.add_argument("--json", default=None)
    ap.add_argument("--episodes", default=None, help="Time episodes (api.run) on this pack instead of scoring.")
    ap.add_argument("--agent", default="keyword", help="--episodes: the agent (default keyword: it searches).")
    args = ap.parse_args()
    if args.episodes:
        out = episodes(args)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        return
    load_before = os.getloadavg()
    questions, lines = build(args.n)
    results: dict = {"n": args.n, "cores": os.cpu_count(), "load_before": [round(x, 2) for x in load_before]}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        results["file_mb"] = round(path.stat().st_size / 1e6, 1)
        results["floor_read_lines"] = _timed(lambda: sum(1 for _ in iter_trace_lines(path)), args.repeat)
        local = LocalBackend()
        results["local"] = _timed(lambda: sum(1 for _t, s, _l in local.rescore(path, questions) if s), args.repeat)
        from groundeval.distributed.ray_backend import RayBackend

        for w in (int(x) for x in args.workers.split(",")):
            t0 = time.perf_counter()
            be = RayBackend(workers=w, **({"chunk_lines": args.chunk} if args.chunk else {}))
            assert be.workers == w
            start = time.perf_counter() - t0
            try:
                sum(1 for _ in be.rescore(path, questions))  # warm: workers import groundeval once
                r = _timed(lambda: sum(1 for _t, s, _l in be.rescore(path, questions) if s), args.repeat)
            finally:
                be.close()
            r["ray_start_s"] = round(start, 1)
            results[f"ray_{w}"] = r
    results["driver_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    for key in ("floor_read_lines", "local", *[k for k in results if k.startswith("ray_")]):
        r = results[key]
        print(
            f"{key:18} {r['traces_per_s']:>9,} traces/s  median {r['median_s']:.3f} s of {r['runs_s']}  "
            f"driver CPU {r['driver_cpu_s']:.3f} s"
            + (f"  (Ray start {r['ray_start_s']} s)" if "ray_start_s" in r else "")
        )
    ones, twos = results.get("ray_1"), results.get("ray_2")
    if ones and twos:
        print(f"Ray 2 workers / 1 worker: x{twos['traces_per_s'] / ones['traces_per_s']:.2f}")
    print(
        f"driver peak RSS {results['driver_peak_rss_mb']} MB · load average before {results['load_before']} "
        f"after {results['load_after']} · {results['cores']} cores · {results['file_mb']} MB of traces"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
