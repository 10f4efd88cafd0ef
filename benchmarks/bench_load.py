"""Load benchmark: time and peak memory of ``Store.open`` at several scales.

Each scale runs in a fresh process (so peak RSS is that load's own). Data: N events
and N artifacts as JSONL, written once per scale into a cache folder.

    python benchmarks/bench_load.py --events 10000 100000 1000000 [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

TYPES = ("incident_opened", "incident_resolved", "postmortem_written", "pr_opened", "pr_reviewed", "email_sent")
SUBSYSTEMS = ("slack", "jira", "confluence", "git", "email")


def write_pack(root: Path, n: int) -> Path:
    """N events and N artifacts (one per event) as JSONL, deterministic."""
    pack = root / f"load-{n}"
    if (pack / "groundeval.yaml").exists():
        return pack
    pack.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with open(pack / "events.jsonl", "w") as ev, open(pack / "artifacts.jsonl", "w") as ar:
        for i in range(n):
            ts = (start + timedelta(seconds=5 * i)).isoformat().replace("+00:00", "Z")
            ev.write(
                json.dumps(
                    {
                        "id": f"ev-{i}",
                        "type": TYPES[i % len(TYPES)],
                        "timestamp": ts,
                        "actors": [f"u{rng.randrange(72)}", f"u{rng.randrange(72)}"],
                        "artifact_ids": {"doc": f"a-{i}"},
                        "facts": {"incident_id": f"INC-{i // 6}", "severity": "sev2"},
                    }
                )
                + "\n"
            )
            ar.write(
                json.dumps(
                    {
                        "id": f"a-{i}",
                        "subsystem": SUBSYSTEMS[i % len(SUBSYSTEMS)],
                        "timestamp": ts,
                        "title": f"Doc {i} about INC-{i // 6}",
                        "body": "notes on the incident, the payment retry loop "
                        "and the follow-up actions agreed by the team",
                    }
                )
                + "\n"
            )
    actors = "\n".join(f"    u{i}: eng" for i in range(72))
    (pack / "groundeval.yaml").write_text(
        f"name: load-{n}\nsources: {{events: events.jsonl, artifacts: artifacts.jsonl}}\n"
        f"access:\n  actors:\n{actors}\n  roles:\n    eng: {{subsystems: [slack, jira]}}\n"
    )
    return pack


CHILD = """
import resource, sys, time
from groundeval.store.store import Store
t = time.perf_counter()
s = Store.open(sys.argv[1])
n = s.query("SELECT count(*) FROM events")[0][0]
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, n)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "groundeval-bench")
    args = ap.parse_args()
    print(f"{'events':>10} {'median s':>10} {'min s':>8} {'peak MB':>9}")
    for n in args.events:
        pack = write_pack(args.cache, n)
        runs = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, "-c", CHILD, str(pack)], capture_output=True, text=True, check=True)
            secs, rss, count = out.stdout.split()
            assert int(count) == n
            runs.append((float(secs), float(rss)))
        print(
            f"{n:>10} {statistics.median(r[0] for r in runs):>10.2f} {min(r[0] for r in runs):>8.2f} "
            f"{max(r[1] for r in runs):>9.0f}"
        )


if __name__ == "__main__":
    main()
