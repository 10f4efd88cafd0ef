"""Benchmark: event graph + question generation time at several scales.

Packs come from the synthetic org generator (``groundeval.synth.generate.write_org``:
72 actors, 9 subsystems, 25 causal link specs, 19 silence pair specs), written once
per scale into a cache folder and loaded into a DuckDB file once (loading is timed
by ``bench_load.py``, not here). Each measured run opens the database and reports
``graph s`` (``build_graph`` without search spaces) and ``total s`` (``generate``:
graph, candidate pools, BM25 search spaces of the pooled silence records, cone
labels, balancing and text). The full export (``groundeval graph``) also ranks the
search space of every silence record and is not part of this figure.

    python benchmarks/bench_generate.py --events 22500 100000 1000000 [--repeat 3]
    python benchmarks/bench_generate.py --pack domain_packs/finance

Targets: 22.5K events < 2 s, 1M events < 60 s, time roughly linear in events.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import json, sys, time
from groundeval.store.store import Store
from groundeval.graph.build import build_graph
from groundeval.questions.generate import generate
pack, db = sys.argv[1], sys.argv[2]
store = Store.open(pack, db=db or None)
store.ensure_fts()  # the index belongs to the store; build it outside the timed region
t0 = time.perf_counter()
eg = build_graph(store, search_spaces=False)
t1 = time.perf_counter()
qs = generate(store)  # builds the graph itself, then samples, labels, balances and writes text
t2 = time.perf_counter()
print(json.dumps({"graph_s": t1 - t0, "total_s": t2 - t1, "questions": len(qs.questions),
                  "events": store.query("SELECT count(*) FROM events")[0][0], "edges": len(eg.causal_edges),
                  "distractors": len(eg.distractors), "absences": len(eg.absences),
                  "presences": len(eg.presences), "ambiguous": len(eg.ambiguous)}))
"""


def synth_pack(cache: Path, n: int) -> Path:
    from groundeval.synth.generate import write_org

    pack = cache / f"org-{n}"
    if not (pack / "groundeval.yaml").exists():
        write_org(pack, events=n, seed=0)
    return pack


def run(pack: Path, db: Path | None) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(pack), str(db or "")], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, nargs="*", default=[22500])
    ap.add_argument("--pack", type=Path, nargs="*", default=[], help="Also (or only) time these packs.")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "groundeval-bench")
    args = ap.parse_args()
    targets = [(str(p), p, None) for p in args.pack]
    if args.events and not (args.pack and args.events == [22500] and "--events" not in sys.argv):
        for n in args.events:
            pack = synth_pack(args.cache, n)
            targets.append((f"synth {n}", pack, args.cache / f"org-{n}.duckdb"))
    print(f"{'pack':<28} {'events':>9} {'graph s':>8} {'total s':>8} {'us/event':>9} {'questions':>9}")
    for name, pack, db in targets:
        runs = [run(pack, db) for _ in range(args.repeat)]
        graph = statistics.median(r["graph_s"] for r in runs)
        total = statistics.median(r["total_s"] for r in runs)
        r = runs[0]
        print(f"{name:<28} {r['events']:>9} {graph:>8.2f} {total:>8.2f} {total / r['events'] * 1e6:>9.1f}"
              f" {r['questions']:>9}   edges {r['edges']} distractors {r['distractors']}"
              f" absences {r['absences']} presences {r['presences']} ambiguous {r['ambiguous']}")


if __name__ == "__main__":
    main()
