"""``groundeval bench``: time every stage of the pipeline on a synthetic org (or a pack).

Stages, each measured on its own and reported even when another fails:

* ``synth``    — write the org (``groundeval.synth.generate.write_org``);
* ``load``     — ``Store.open`` (parse, validate, type into DuckDB) and the BM25 index;
* ``graph``    — ``build_graph`` (causal edges, distractors, silence records);
* ``generate`` — ``questions.generate.generate`` (graph included, as users run it);
* ``fetch`` / ``search`` — per-call latency (p50, p99) of the gated runtime tools;
* ``oracle``   — the oracle agent through the runtime on a sample of questions;
* ``score``    — re-scoring its traces with the pure scorer (throughput).

Components are imported lazily: a stage whose code is missing is ``unavailable``,
one that raises is ``error`` with the message; neither stops the others. Wall-clock
figures live only here, never in questions, traces or scores.
"""

from __future__ import annotations

import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable

from ..errors import GroundevalError

STAGES = ("synth", "load", "graph", "generate", "fetch", "search", "oracle", "score")


class Unavailable(GroundevalError):
    """A component this stage needs is not installed or not written yet."""


def machine() -> dict[str, Any]:
    """Where the figures were measured."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        mem_gb = round(pages * size / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    import duckdb

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "duckdb": duckdb.__version__,
    }


def _peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)


def _pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile, in milliseconds."""
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(q / 100.0 * len(ordered) + 0.5)) - 1))
    return round(ordered[k] * 1000.0, 3)


def _import(module: str, attr: str) -> Any:
    try:
        mod = __import__(module, fromlist=[attr])
        return getattr(mod, attr)
    except (ImportError, AttributeError) as exc:
        raise Unavailable(f"{module}.{attr}: {exc}") from None


class _Run:
    """State shared by the stages of one scale."""

    def __init__(
        self,
        label: str,
        pack: Path | None,
        events: int | None,
        seed: int,
        samples: int,
        oracle_questions: int,
        workdir: Path,
    ):
        self.label, self.pack, self.events, self.seed = label, pack, events, seed
        self.samples, self.oracle_questions, self.workdir = samples, oracle_questions, workdir
        self.store: Any = None
        self.questions: Any = None
        self.traces: list[tuple[Any, Any]] = []

    # ------------------------------------------------------------------ stages

    def synth(self) -> dict[str, Any]:
        if self.events is None:
            return {"status": "skipped", "note": "existing pack"}
        write_org = _import("groundeval.synth.generate", "write_org")
        out = self.workdir / f"synth-{self.events}-s{self.seed}"
        t = time.perf_counter()
        summary = write_org(out, events=self.events, seed=self.seed)
        secs = time.perf_counter() - t
        self.pack = out
        return {
            "seconds": round(secs, 3),
            "events": summary["events"],
            "artifacts": summary["artifacts"],
            "events_per_s": round(summary["events"] / secs),
        }

    def _need_store(self) -> Any:
        if self.store is None:
            self.load()
        return self.store

    def load(self) -> dict[str, Any]:
        if self.pack is None:
            raise Unavailable("no pack (the synth stage did not run)")
        Store = _import("groundeval.store.store", "Store")
        t = time.perf_counter()
        self.store = Store.open(self.pack)
        secs = time.perf_counter() - t
        t = time.perf_counter()
        self.store.ensure_fts()
        fts = time.perf_counter() - t
        n = self.store.query("SELECT count(*) FROM events")[0][0]
        a = self.store.query("SELECT count(*) FROM artifacts")[0][0]
        return {
            "seconds": round(secs, 3),
            "fts_seconds": round(fts, 3),
            "events": n,
            "artifacts": a,
            "events_per_s": round(n / secs) if secs else None,
        }

    def graph(self) -> dict[str, Any]:
        build_graph = _import("groundeval.graph.build", "build_graph")
        store = self._need_store()
        t = time.perf_counter()
        g = build_graph(store)
        secs = time.perf_counter() - t
        return {
            "seconds": round(secs, 3),
            "causal_edges": len(g.causal_edges),
            "distractors": len(g.distractors),
            "absences": len(g.absences),
            "presences": len(g.presences),
            "ambiguous": len(g.ambiguous),
        }

    def generate(self) -> dict[str, Any]:
        generate = _import("groundeval.questions.generate", "generate")
        store = self._need_store()
        t = time.perf_counter()
        self.questions = generate(store)
        secs = time.perf_counter() - t
        by_track: dict[str, int] = {}
        for q in self.questions.questions:
            by_track[q.track] = by_track.get(q.track, 0) + 1
        return {
            "seconds": round(secs, 3),
            "questions": len(self.questions.questions),
            "by_track": dict(sorted(by_track.items())),
        }

    def _perspective_question(self) -> Any:
        if self.questions is None:
            self.generate()
        for q in self.questions.questions:
            if q.track == "perspective" and q.actor:
                return q
        raise Unavailable("no Perspective question to run tools under")

    def _timed_calls(self, call: Callable[[Any, Any], Any], args: list[Any]) -> dict[str, Any]:
        Episode = _import("groundeval.runtime.episode", "Episode")
        store, q = self._need_store(), self._perspective_question()
        times: list[float] = []
        opens: list[float] = []
        batch = 25  # a fresh episode every few calls so the step budget never ends it
        for start in range(0, len(args), batch):
            t = time.perf_counter()
            ep = Episode(store, q, mode="tool", agent="bench", max_steps=batch + 5)
            opens.append(time.perf_counter() - t)
            with ep:
                for a in args[start : start + batch]:
                    t = time.perf_counter()
                    call(ep, a)
                    times.append(time.perf_counter() - t)
        return {
            "calls": len(times),
            "p50_ms": _pct(times, 50),
            "p99_ms": _pct(times, 99),
            "mean_ms": round(statistics.fmean(times) * 1000.0, 3) if times else 0.0,
            "max_ms": round(max(times) * 1000.0, 3) if times else 0.0,
            "episode_open_p50_ms": _pct(opens, 50),
        }

    def fetch(self) -> dict[str, Any]:
        store = self._need_store()
        rows = store.query(
            "SELECT id FROM artifacts ORDER BY md5(id || ?::VARCHAR) LIMIT ?", [str(self.seed), self.samples]
        )
        ids = [r[0] for r in rows]
        return self._timed_calls(lambda ep, a: ep.fetch(a), ids)

    def search(self) -> dict[str, Any]:
        store = self._need_store()
        store.ensure_fts()
        rows = store.query(
            "SELECT title FROM artifact_text WHERE title <> '' ORDER BY md5(id || ?::VARCHAR) LIMIT ?",
            [str(self.seed), self.samples],
        )
        rng = random.Random(self.seed)
        queries = []
        for (title,) in rows:
            words = [w.strip(":#()[],.") for w in title.split() if len(w.strip(":#()[],.")) > 2]
            if words:
                queries.append(" ".join(rng.sample(words, min(2, len(words)))))
        return self._timed_calls(lambda ep, qy: ep.search(qy), queries)

    def oracle(self) -> dict[str, Any]:
        get_agent = _import("groundeval.agents.registry", "get_agent")
        run_episode = _import("groundeval.agents.runner", "run_episode")
        score = _import("groundeval.scoring.score", "score")
        store = self._need_store()
        if self.questions is None:
            self.generate()
        qs = _spread(self.questions.questions, self.oracle_questions)
        agent = get_agent("oracle")
        t = time.perf_counter()
        self.traces = [(q, run_episode(store, q, agent)) for q in qs]
        secs = time.perf_counter() - t
        config = store.manifest.evaluation.scoring
        s_adj = [score(q, tr, config).s_adj for q, tr in self.traces]
        calls = (
            sum(len(tr.calls) for _q, tr in self.traces)
            if self.traces and hasattr(self.traces[0][1], "calls")
            else None
        )
        return {
            "seconds": round(secs, 3),
            "questions": len(qs),
            "ms_per_question": round(secs * 1000.0 / len(qs), 2) if qs else 0.0,
            "tool_calls": calls,
            "mean_s_adj": round(statistics.fmean(s_adj), 4) if s_adj else None,
            "min_s_adj": round(min(s_adj), 4) if s_adj else None,
        }

    def score(self) -> dict[str, Any]:
        score = _import("groundeval.scoring.score", "score")
        if not self.traces:
            self.oracle()
        config = self.store.manifest.evaluation.scoring
        n, t = 0, time.perf_counter()
        while n < 2000 and time.perf_counter() - t < 5.0:
            for q, tr in self.traces:
                score(q, tr, config)
                n += 1
        secs = time.perf_counter() - t
        return {"seconds": round(secs, 3), "scored": n, "scores_per_s": round(n / secs) if secs else None}


def _spread(questions: list[Any], k: int) -> list[Any]:
    """Up to ``k`` questions spread evenly over the (deterministically ordered) set."""
    if len(questions) <= k:
        return list(questions)
    step = len(questions) / k
    return [questions[int(i * step)] for i in range(k)]


def run_bench(
    *,
    scales: list[int],
    packs: list[Path] | None = None,
    seed: int = 0,
    stages: list[str] | None = None,
    samples: int = 200,
    oracle_questions: int = 60,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the chosen stages at every scale (and on every given pack); returns a JSON-able dict."""
    stages = [s for s in (stages or list(STAGES))]
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        from ..errors import UsageError

        raise UsageError.single(
            "--stages", f"unknown stage(s) {', '.join(unknown)}; expected some of {', '.join(STAGES)}"
        )
    say = progress or (lambda _m: None)
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="groundeval-bench-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    runs = []
    jobs = [(f"synth {n:,}", None, n) for n in scales] + [(str(p), Path(p), None) for p in packs or []]
    try:
        for label, pack, events in jobs:
            run = _Run(label, pack, events, seed, samples, oracle_questions, workdir)
            results: dict[str, Any] = {}
            for stage in STAGES:
                if stage not in stages:
                    continue
                say(f"[{label}] {stage} ...")
                try:
                    results[stage] = {"status": "ok", **getattr(run, stage)()}
                except Unavailable as exc:
                    results[stage] = {"status": "unavailable", "note": str(exc)}
                except Exception as exc:  # noqa: BLE001 - a failing stage is reported, the others still run
                    last = traceback.extract_tb(exc.__traceback__)[-1]
                    results[stage] = {
                        "status": "error",
                        "note": f"{type(exc).__name__}: {exc} ({Path(last.filename).name}:{last.lineno})",
                    }
            if run.store is not None:
                run.store.close()
            runs.append(
                {
                    "label": label,
                    "events": events,
                    "pack": str(pack) if pack else None,
                    "stages": results,
                    "peak_rss_mb": _peak_rss_mb(),
                }
            )
    finally:
        if tmp is not None:
            tmp.cleanup()
    return {"machine": machine(), "seed": seed, "runs": runs}


def _cell(stage: str, r: dict[str, Any] | None) -> str:
    if r is None:
        return "-"
    if r.get("status") != "ok":
        return r.get("status", "?")
    if stage in ("fetch", "search"):
        return f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f} ms"
    if stage == "score":
        return f"{r['scores_per_s']:,}/s"
    if stage == "oracle":
        return f"{r['seconds']:.2f} s ({r['questions']} q, S_adj {r['mean_s_adj']})"
    if stage == "generate":
        return f"{r['seconds']:.2f} s ({r['questions']} q)"
    if stage == "load":
        return f"{r['seconds']:.2f} s (+fts {r['fts_seconds']:.2f})"
    return f"{r['seconds']:.2f} s"


def render_table(result: dict[str, Any]) -> None:
    """Print the results as a rich table (stages as rows, scales as columns)."""
    from rich.console import Console
    from rich.table import Table

    m = result["machine"]
    console = Console()
    table = Table(
        title=f"groundeval bench — {m['cpu']}, {m['cores']} cores, Python {m['python']}, DuckDB {m['duckdb']}",
        title_justify="left",
    )
    table.add_column("stage")
    for run in result["runs"]:
        table.add_column(run["label"], justify="right")
    for stage in STAGES:
        if not any(stage in run["stages"] for run in result["runs"]):
            continue
        label = stage + (" p50 / p99" if stage in ("fetch", "search") else "")
        table.add_row(label, *[_cell(stage, run["stages"].get(stage)) for run in result["runs"]])
    table.add_row("peak RSS", *[f"{run['peak_rss_mb']:,.0f} MB" for run in result["runs"]])
    console.print(table)
    for run in result["runs"]:
        for stage, r in run["stages"].items():
            if r.get("status") in ("unavailable", "error"):
                console.print(f"[yellow]{run['label']} {stage}: {r['status']}[/yellow] {r.get('note', '')}")
