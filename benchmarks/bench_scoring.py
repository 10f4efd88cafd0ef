"""Re-scoring throughput: parse a traces JSONL file and score every line on one core.

    python benchmarks/bench_scoring.py [--n 20000] [--repeat 3]

Builds a synthetic, realistic mix of questions (all tracks and buckets) and traces
(searches, fetches, gated fetches, not-found ids, a submission; ~8 calls each),
writes them to a temporary JSONL file, then times ``iter_rescore`` over the file.
Target: >= 20,000 question-traces per second.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "scoring"))

from scoring_builders import (
    counterfactual,
    fetch,
    perfect_counterfactual_answer,  # noqa: E402
    perfect_perspective_answer,
    perspective,
    search,
    silence,
    trace,
)

from groundeval.scoring.io import iter_rescore, score_line  # noqa: E402
from groundeval.trace.io import trace_line  # noqa: E402


def build(n: int, seed: int = 0):
    rng = random.Random(seed)
    questions = {}
    lines = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            q = perspective(qid=f"p{i}", evidence=("slack-1", "jira-2"))
            answer = perfect_perspective_answer(q)
            calls = [search("checkout outage"), fetch("slack-1"), fetch("jira-2"), fetch("zoom-1", flags=["subsystem"])]
        elif kind == 1:
            q = perspective(False, evidence=(), blocked=("zoom",), bucket="negative_permission", qid=f"n{i}")
            answer = perfect_perspective_answer(q)
            calls = [search("meeting"), search("zoom", subsystem="zoom", flags=["subsystem"])]
        elif kind == 2:
            q = counterfactual(positive=rng.random() < 0.7, qid=f"c{i}")
            answer = perfect_counterfactual_answer(q)
            calls = [search("escalation"), fetch("ZD-7"), fetch("JIRA-42"), fetch("INC-404", status="not_found")]
        else:
            q = silence(exists=rng.random() < 0.5, qid=f"s{i}")
            answer = {"exists": q.ground_truth.exists, "evidence_artifacts": []}
            calls = [
                search("postmortem", subsystem="confluence", hits=("PM-41", "PM-42")),
                fetch("JIRA-43"),
                fetch("PM-43"),
                fetch("PM-41"),
            ]
        rng.shuffle(calls)
        questions[q.id] = q
        lines.append(trace_line(trace(q, calls, answer)))
    return questions, lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    questions, lines = build(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        size = path.stat().st_size
        best = best_cpu = None
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            count = sum(1 for _t, s in iter_rescore(path, questions) if s is not None)
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
            best = dt if best is None else min(best, dt)
            best_cpu = dc if best_cpu is None else min(best_cpu, dc)
        t0 = time.perf_counter()
        out = [score_line(s) for _t, s in iter_rescore(path, questions)]
        with_ser = time.perf_counter() - t0
        floor = floor_cpu = None
        for _ in range(args.repeat):  # the floor, in the same run: reading the file and json.loads of every line
            t0, c0 = time.perf_counter(), time.process_time()
            with open(path, "rb") as fh:
                for line in fh:
                    json.loads(line)
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
            floor = dt if floor is None else min(floor, dt)
            floor_cpu = dc if floor_cpu is None else min(floor_cpu, dc)
    print(f"traces: {count}  file: {size / 1e6:.1f} MB")
    print(f"parse+score: {best:.3f} s wall  -> {count / best:,.0f} question-traces/s (best of {args.repeat})")
    print(f"parse+score: {best_cpu:.3f} s CPU   -> {count / best_cpu:,.0f} question-traces/s per core")
    print(f"parse+score+serialise: {with_ser:.3f} s  -> {len(out) / with_ser:,.0f} question-traces/s")
    print(f"floor (read + json.loads): {floor:.3f} s wall, {floor_cpu:.3f} s CPU -> {count / floor_cpu:,.0f} lines/s")


if __name__ == "__main__":
    main()
