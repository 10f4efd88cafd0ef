"""Agent runs: runtime overhead per episode with built-in agents, and the oracle end to end
on a synthetic organisation.

    python benchmarks/bench_agents.py [--pack domain_packs/finance] [--events 22500] [--seed 0]
                                      [--concurrency 1] [--keep DIR] [--skip-org]

Part 1 — per-episode cost on a bundled pack: for each built-in agent, every generated
question is run through the gated runtime (``run_episode``: Episode setup, the agent's
tool calls, trace finalisation); median / p95 / mean wall-clock per episode, calls per
episode and the share spent inside tool calls (the runtime's own latency) versus
episode setup + agent logic. Then the runner (threads, durable trace appends) over the
same questions, to show what writing each trace with fsync adds.

Part 2 — ``groundeval synth`` writes a 22.5K-event org; the oracle then goes through the
stages of the main job (verify, load, generate, run, score, report) on every question.
Each stage is timed; the target is under 30 s end to end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from groundeval import api  # noqa: E402
from groundeval.agents.registry import get_agent  # noqa: E402
from groundeval.agents.runner import run_episode, run_questions  # noqa: E402
from groundeval.questions.generate import generate  # noqa: E402
from groundeval.store.store import Store  # noqa: E402


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def per_episode(pack: Path, agents: list[str], tmp: Path, concurrency: int) -> dict:
    store = Store.open(pack)
    store.ensure_fts()
    qs = generate(store)
    out: dict = {"pack": str(pack), "questions": len(qs.questions), "agents": {}}
    for name in agents:
        agent = get_agent(name)
        run_episode(store, qs.questions[0], agent)  # warm caches (fetch index, prepared statements)
        walls, calls, tool_ms = [], [], []
        for q in qs.questions:
            t0 = time.perf_counter()
            trace = run_episode(store, q, agent)
            walls.append((time.perf_counter() - t0) * 1000)
            calls.append(len(trace.calls))
            tool_ms.append(sum(trace.timings.call_latency_ms))
        t0 = time.perf_counter()
        run_questions(store, qs, agent, out_dir=tmp / name, concurrency=concurrency, overwrite=True)
        runner_s = time.perf_counter() - t0
        out["agents"][name] = {
            "episode_ms_p50": round(statistics.median(walls), 2),
            "episode_ms_p95": round(pct(walls, 0.95), 2),
            "episode_ms_mean": round(statistics.fmean(walls), 2),
            "calls_per_episode": round(statistics.fmean(calls), 2),
            "tool_call_share": round(sum(tool_ms) / sum(walls), 3),
            "setup_and_agent_ms_mean": round(statistics.fmean(w - t for w, t in zip(walls, tool_ms)), 2),
            "runner_total_s": round(runner_s, 3),
            "runner_ms_per_episode": round(runner_s * 1000 / len(qs.questions), 2),
        }
    store.close()
    return out


def synthetic_org(events: int, seed: int, tmp: Path, concurrency: int, verify_level: int) -> dict:
    """Each stage of the main job timed on its own (the verifier loads its own copy)."""
    from groundeval.agents.runner import run_questions
    from groundeval.report.render import write_reports
    from groundeval.scoring.aggregate import aggregate
    from groundeval.trace.io import read_traces

    pack = tmp / "org"
    stages: dict[str, float] = {}

    def timed(name: str, fn):
        t0 = time.perf_counter()
        value = fn()
        stages[name] = round(time.perf_counter() - t0, 3)
        return value

    from groundeval.synth.generate import write_org

    counts = timed("synth", lambda: write_org(pack, events=events, seed=seed))
    if verify_level:
        timed(f"verify_level{verify_level}", lambda: api.verify_pack(pack, level=verify_level))
    store = timed("load", lambda: Store.open(pack))
    qs = timed("generate", lambda: generate(store))
    out = tmp / "eval"
    path = timed(
        "run",
        lambda: run_questions(store, qs, get_agent("oracle"), out_dir=out, concurrency=concurrency, overwrite=True),
    )
    cfg = store.manifest.evaluation.scoring
    traces = read_traces(path)
    scores = timed("score", lambda: api.score_run(qs, traces, config=cfg))
    report = timed(
        "report",
        lambda: write_reports(
            aggregate(qs.questions, traces, scores, config=cfg),
            out,
            questions=qs.questions,
            traces=traces,
            scores=scores,
        ),
    )
    store.close()
    pipeline = sum(v for k, v in stages.items() if k in ("load", "generate", "run", "score", "report"))
    return {
        "events": events,
        "artifacts": counts.get("artifacts"),
        "questions": len(qs.questions),
        "oracle_mean_s_adj": round(statistics.fmean(s.s_adj for s in scores), 6),
        "oracle_min_s_adj": min(s.s_adj for s in scores),
        "run_ms_per_episode": round(stages["run"] * 1000 / len(qs.questions), 2),
        "stages_s": stages,
        "load_generate_run_score_report_s": round(pipeline, 3),
        "with_verify_s": round(pipeline + sum(v for k, v in stages.items() if k.startswith("verify")), 3),
        "target_s": 30.0,
        "reports": sorted(p.name for p in report.values()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", default="domain_packs/finance")
    ap.add_argument("--agents", default="oracle,lazy,keyword,leaky")
    ap.add_argument("--events", type=int, default=22500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--keep", type=Path, default=None, help="Keep the generated files here.")
    ap.add_argument("--skip-org", action="store_true")
    ap.add_argument("--verify-level", type=int, default=4, help="0 skips verification.")
    args = ap.parse_args()
    ctx = tempfile.TemporaryDirectory() if args.keep is None else None
    tmp = Path(ctx.name) if ctx else args.keep
    tmp.mkdir(parents=True, exist_ok=True)
    result = {"per_episode": per_episode(Path(args.pack), args.agents.split(","), tmp, args.concurrency)}
    print(json.dumps(result, indent=2), flush=True)
    if not args.skip_org:
        result["synthetic_org"] = synthetic_org(args.events, args.seed, tmp, args.concurrency, args.verify_level)
        print(json.dumps(result["synthetic_org"], indent=2))
    if ctx:
        ctx.cleanup()


if __name__ == "__main__":
    main()
