"""Benchmark: event graph + question generation time at several scales.

Packs come from the synthetic org generator (``groundeval.synth.generate.write_org``:
72 actors, 9 subsystems, 25 causal link specs, 19 silence pair specs), written once
per scale into a cache folder and loaded into a DuckDB file once (loading is timed
by ``bench_load.py``, not here). Each measured run is a fresh process that opens the
database and times what a user pays for ``groundeval generate``:

* ``total s`` — ``generate(store)``: its own graph (each spec's seeded samples, chosen in
  SQL), candidate pools, BM25 search spaces of the pooled silence records (ranked straight
  from the text: generation builds no FTS index), cone labels, balancing and text;
  ``cpu s`` its CPU time (every thread);
* ``graph s`` — the graph step inside that same ``generate`` (not a second build);
* ``export s`` (with ``--export``, a separate process) — ``build_graph(store)`` with the
  search space of every silence record, as ``groundeval graph`` and the verifier use it
  (they build the FTS index);
* ``rss MB`` — the process's peak resident memory.

    python benchmarks/bench_generate.py --events 22500 100000 1000000 [--repeat 3] [--export]
    python benchmarks/bench_generate.py --pack domain_packs/finance

Targets: 22.5K events < 2 s, 1M events < 60 s, time roughly linear in events.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import json, resource, sys, time
from groundeval.store.store import Store
import groundeval.questions.generate as gen
pack, db, mode = sys.argv[1], sys.argv[2], sys.argv[3]
store = Store.open(pack, db=db or None)
if mode != "export":  # generation ranks without the FTS index, as on a fresh pack: drop one an export run left
    store.con.execute("DROP SCHEMA IF EXISTS fts_main_artifact_text CASCADE")
spent = {}
def timed(build):
    def run(*args, **kwargs):
        t = time.perf_counter()
        out = build(*args, **kwargs)
        spent["graph_s"] = time.perf_counter() - t
        spent["eg"] = out
        return out
    return run
gen._graph = timed(gen._graph)  # the graph generation reads (its tracks' samples)
t0 = time.perf_counter()
c0 = time.process_time()
if mode == "export":
    eg = timed(gen.build_graph)(store)
    n = None
else:
    n = len(gen.generate(store).questions)
t1 = time.perf_counter()
spent["cpu_s"] = time.process_time() - c0
eg = spent["eg"]
print(json.dumps({"graph_s": spent["graph_s"], "total_s": t1 - t0, "cpu_s": spent["cpu_s"], "questions": n,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "events": store.query("SELECT count(*) FROM events")[0][0], "edges": eg.stats["causal_edges"],
                  "distractors": eg.stats["distractors"], "absences": eg.stats["absences"],
                  "presences": eg.stats["presences"], "ambiguous": sum(eg.stats["ambiguous"].values())}))
"""


def synth_pack(cache: Path, n: int) -> Path:
    from groundeval.synth.generate import write_org

    pack = cache / f"org-{n}"
    if not (pack / "groundeval.yaml").exists():
        write_org(pack, events=n, seed=0)
    return pack


def run(pack: Path, db: Path | None, mode: str = "generate") -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(pack), str(db or ""), mode], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, nargs="*", default=[22500])
    ap.add_argument("--pack", type=Path, nargs="*", default=[], help="Also (or only) time these packs.")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--export", action="store_true", help="Also time the graph with every search space.")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "groundeval-bench")
    args = ap.parse_args()
    targets = [(str(p), p, None) for p in args.pack]
    if args.events and not (args.pack and args.events == [22500] and "--events" not in sys.argv):
        for n in args.events:
            pack = synth_pack(args.cache, n)
            targets.append((f"synth {n}", pack, args.cache / f"org-{n}.duckdb"))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(
        f"{'pack':<20} {'events':>9} {'graph s':>8} {'total s':>8} {'cpu s':>7} {'us/event':>9} {'rss MB':>7}"
        f" {'export s':>8} {'questions':>9}"
    )
    for name, pack, db in targets:
        runs = [run(pack, db) for _ in range(args.repeat)]
        graph = statistics.median(r["graph_s"] for r in runs)
        total = statistics.median(r["total_s"] for r in runs)
        cpu = statistics.median(r["cpu_s"] for r in runs)
        rss = max(r["rss_mb"] for r in runs)
        export = "-"
        if args.export:
            ex = [run(pack, db, "export") for _ in range(args.repeat)]
            export = f"{statistics.median(r['total_s'] for r in ex):.2f}"
            rss = max(rss, *(r["rss_mb"] for r in ex))
        r = runs[0]
        print(
            f"{name:<20} {r['events']:>9} {graph:>8.2f} {total:>8.2f} {cpu:>7.2f} {total / r['events'] * 1e6:>9.1f}"
            f" {rss:>7.0f} {export:>8} {r['questions']:>9}   edges {r['edges']} distractors {r['distractors']}"
            f" absences {r['absences']} presences {r['presences']} ambiguous {r['ambiguous']}"
        )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
