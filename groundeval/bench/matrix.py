"""``groundeval bench --matrix``: the whole-process benchmark matrix.

Formats (``native``: one events JSONL + one artifacts JSONL; ``original``: ``config.yaml`` +
events JSONL + one JSON file per artifact) × scales (events), each stage run as users run
it — a fresh ``groundeval`` process — and measured from outside: wall time, CPU time
(user + sys) and peak RSS of that process (``os.wait4``), with the load average at its
start. Each stage sits next to a *floor* measured in the same run on the same files:

* load       — ``Store.open`` in a fresh process (and ``groundeval info``: load plus the
  verifier's cheap levels); floor: DuckDB ``read_json`` of the events into a table, plus
  reading and ``json.loads`` of every artifact record (file or line);
* verify L1-L4 — ``groundeval verify --level N``;
* generate   — ``groundeval generate``;
* eval       — ``groundeval eval --agent oracle`` (verify L4, generate, run, score, report);
* search     — gated ``search_artifacts`` p50 / p99;  floor: plain ``match_bm25`` without gates;
* rescore    — ``groundeval score`` of N traces (throughput); floor: ``json.loads`` of the
  same traces file;
* original generate — with ``original_python`` (a Python where the original GroundEval release
  is importable, :mod:`groundeval.bench.original`), its question generator on the same
  original-format pack, beside ``generate``, and the ratio of the two.

Nothing here feeds any output of the pipeline: wall-clock figures live only in the
benchmark's own report.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

MATRIX_STAGES = ("load", "verify1", "verify2", "verify3", "verify4", "generate", "eval", "search", "rescore")
FORMATS = ("native", "original")


def _groundeval(*args: str) -> list[str]:
    return [sys.executable, "-m", "groundeval.cli.main", *args]


# A fresh, small Python process runs the measured command and reports its rusage. Linux
# keeps a process's peak RSS across fork and exec, so a child forked straight from a large
# parent (a test runner, the bench itself) would report the parent's size, not its own.
_LAUNCHER = """
import json, os, subprocess, sys
proc = subprocess.Popen(json.loads(sys.argv[1]), stdin=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[2], "w") as fh:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss], fh)
"""


def measure(cmd: list[str], *, timeout: float | None = None, cwd: Path | None = None) -> dict[str, Any]:
    """Run ``cmd`` to completion (in ``cwd``); its wall time, CPU time and peak RSS (of that process alone)."""
    load = os.getloadavg()[0]
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory(prefix="groundeval-bench-") as tmp,
    ):
        side = Path(tmp) / "usage.json"
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, json.dumps(cmd), str(side)],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=cwd,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher and the measured command
            proc.wait()
        wall = time.perf_counter() - started
        code, cpu, maxrss = json.loads(side.read_text()) if side.exists() else (proc.returncode, 0.0, 0)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    rss = maxrss / (2**20 if sys.platform == "darwin" else 2**10)
    return {
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "peak_rss_mb": round(rss, 1),
        "exit": code,
        "load_avg": round(load, 2),
        "stdout": stdout,
        "stderr": stderr[-2000:],
    }


# ---------------------------------------------------------------------- floors and probes
# Run as ``python -m groundeval.bench.matrix <probe> ...`` in a fresh process, printing JSON.


def _probe_load_floor(pack: str) -> dict[str, Any]:
    import duckdb

    from ..contract.manifest import load_manifest

    paths = load_manifest(pack)
    t = time.perf_counter()
    con = duckdb.connect()
    con.execute("CREATE TABLE ev AS SELECT * FROM read_json(?, format = 'newline_delimited')", [str(paths.events_path)])
    n = con.execute("SELECT count(*) FROM ev").fetchone()[0]
    events_s = time.perf_counter() - t
    t = time.perf_counter()
    loads, records = json.loads, 0
    src = paths.artifacts_path
    if src.is_dir():
        from ..store.ingest import json_files

        for name in json_files(src):
            with open(name, "rb") as fh:
                loads(fh.read())
            records += 1
    else:
        with open(src, "rb") as fh:
            for line in fh:
                if line.strip():
                    loads(line)
                    records += 1
    return {
        "events": n,
        "events_read_json_s": round(events_s, 3),
        "artifacts": records,
        "artifacts_json_loads_s": round(time.perf_counter() - t, 3),
    }


def _probe_store_open(pack: str) -> dict[str, Any]:
    from ..store.store import Store

    t = time.perf_counter()
    store = Store.open(pack)
    secs = time.perf_counter() - t
    n = store.query("SELECT count(*) FROM events")[0][0]
    a = store.query("SELECT count(*) FROM artifacts")[0][0]
    return {"open_s": round(secs, 3), "events": n, "artifacts": a}


def _probe_search(pack: str, samples: int, seed: int, questions: str | None = None) -> dict[str, Any]:
    from ..questions.io import read_questions
    from ..runtime.episode import Episode
    from ..store.store import Store

    store = Store.open(pack)
    store.ensure_fts()
    rows = store.query(
        "SELECT title FROM artifact_text WHERE title <> '' ORDER BY md5(id || ?::VARCHAR) LIMIT ?", [str(seed), samples]
    )
    rng = random.Random(seed)
    queries = []
    for (title,) in rows:
        words = [w.strip(":#()[],.") for w in title.split() if len(w.strip(":#()[],.")) > 2]
        if words:
            queries.append(" ".join(rng.sample(words, min(2, len(words)))))
    qs = read_questions(questions) if questions else None
    question = next((q for q in (qs.questions if qs else []) if q.track == "perspective" and q.actor), None)
    if question is None:
        from ..questions.generate import generate

        question = next(q for q in generate(store).questions if q.track == "perspective" and q.actor)
    gated: list[float] = []
    for start in range(0, len(queries), 25):
        with Episode(store, question, mode="tool", agent="bench", max_steps=30) as ep:
            for query in queries[start : start + 25]:
                t = time.perf_counter()
                ep.search(query)
                gated.append(time.perf_counter() - t)
    plain: list[float] = []
    cur = store.cursor
    for query in queries:
        t = time.perf_counter()
        cur.execute(
            "SELECT id, score FROM (SELECT id, fts_main_artifact_text.match_bm25(id, ?) AS score "
            "FROM artifact_text) WHERE score IS NOT NULL ORDER BY score DESC, id LIMIT 20",
            [query],
        ).fetchall()
        plain.append(time.perf_counter() - t)
    return {
        "queries": len(queries),
        "p50_ms": _pct(gated, 50),
        "p99_ms": _pct(gated, 99),
        "floor_p50_ms": _pct(plain, 50),
        "floor_p99_ms": _pct(plain, 99),
    }


def _probe_traces_floor(path: str) -> dict[str, Any]:
    t = time.perf_counter()
    n = 0
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                json.loads(line)
                n += 1
    return {"traces": n, "json_loads_s": round(time.perf_counter() - t, 3)}


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(q / 100.0 * len(ordered) + 0.5)) - 1))
    return round(ordered[k] * 1000.0, 3)


def _probe(name: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "groundeval.bench.matrix", name, *args]


def _json_out(r: dict[str, Any]) -> dict[str, Any]:
    try:
        return json.loads(r["stdout"])
    except ValueError:
        return {}


# ---------------------------------------------------------------------- the matrix


def _replicate_traces(sources: list[Path], out: Path, n: int) -> int:
    """``n`` traces cycled from ``sources``, each copy under its own agent name and trial (one
    trace per (question, trial), as ``score`` demands)."""
    lines = [
        ln for src in sources if src.is_file() for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()
    ]
    if not lines:
        return 0
    parsed = [json.loads(ln) for ln in lines]
    with open(out, "w", encoding="utf-8") as fh:
        for i in range(n):
            t = dict(parsed[i % len(parsed)])
            t["agent"] = f"{t.get('agent') or 'agent'}-{i // len(parsed):05d}"
            t["trial"] = i
            fh.write(json.dumps(t, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")
    return n


def _pack(workdir: Path, fmt: str, events: int, seed: int, style: str, say: Callable[[str], None]) -> tuple[Path, dict]:
    out = workdir / f"{style}-{fmt}-{events}-s{seed}"
    done = out / ".bench-complete.json"
    if done.is_file():
        return out, json.loads(done.read_text())
    if out.exists():
        shutil.rmtree(out)
    say(f"[{fmt} {events:,}] synth ...")
    r = measure(
        _groundeval(
            "synth", str(out), "--events", str(events), "--seed", str(seed), "--format", fmt, "--style", style, "--json"
        )
    )
    if r["exit"] != 0:
        raise RuntimeError(f"synth failed: {r['stderr']}")
    info = {"synth": {k: v for k, v in r.items() if k not in ("stdout", "stderr")}, **_json_out(r)}
    done.write_text(json.dumps(info))
    return out, info


def _cell(r: dict[str, Any], events: int) -> dict[str, Any]:
    cell = {k: v for k, v in r.items() if k not in ("stdout", "stderr")}
    cell["us_per_event"] = round(r["seconds"] * 1e6 / events, 2) if events else None
    if r["exit"] not in (0, 1):  # verify exits 1 on findings, which is a result, not a failure
        cell["status"] = "error"
        cell["note"] = (r["stderr"].strip().splitlines() or [""])[-1][:300]
    else:
        cell["status"] = "ok"
    return cell


def _load_stage(
    stage: Callable[[str, list[str]], dict[str, Any]],
    res: dict[str, Any],
    pack: Path,
    events: int,
    timeout: float,
) -> None:
    """Opening the store, ``groundeval info``, and the load floor (reading the files alone);
    apart from :func:`run_matrix` to keep its loop short."""
    r = stage("load", _probe("store-open", str(pack)))
    res["load"].update(_json_out(r))
    stage("info", _groundeval("info", str(pack), "--json"))
    f = measure(_probe("load-floor", str(pack)), timeout=timeout)
    res["load_floor"] = {**_cell(f, events), **_json_out(f)}


def _generate_stage(
    stage: Callable[[str, list[str]], dict[str, Any]], res: dict[str, Any], pack: Path, questions: Path
) -> None:
    """``groundeval generate`` into ``questions``, with how many it wrote when it wrote the file;
    apart from :func:`run_matrix` to keep its loop short."""
    stage("generate", _groundeval("generate", str(pack), "--out", str(questions), "--force"))
    if questions.is_file():
        res["generate"]["questions"] = len(json.loads(questions.read_text())["questions"])


def _original_stage(
    stage: Callable[..., dict[str, Any]],
    res: dict[str, Any],
    fmt: str,
    pack: Path,
    run_dir: Path,
    python: str | None,
    unavailable: str | None,
) -> None:
    """On an original-format pack, the original release's generator (``original_generate``) and
    the ratio of our ``generate`` to it (``original_ratio``); both ``unavailable`` without a usable
    ``python``. Nothing on a native pack, which the original cannot read."""
    from ..contract.manifest import load_manifest
    from .original import original_generate_cmd

    if fmt != "original":
        return
    if unavailable or not python:
        res["original_generate"] = {"status": "unavailable", "note": unavailable or "no --original-python given"}
    else:
        out = run_dir / "original"
        cmd = original_generate_cmd(python, pack, load_manifest(pack).events_path, out)
        r = stage("original_generate", cmd, cwd=out)
        cell = res["original_generate"]
        if r["exit"] != 0:  # the original exits 1 on an exception: a failure, not a finding
            cell["status"] = "error"
            cell["note"] = (r["stderr"].strip().splitlines() or [""])[-1][:300]
        made = out / "eval_output" / "eval_questions.json"
        try:
            cell["questions"] = len(json.loads(made.read_text(encoding="utf-8")).get("questions", []))
        except (OSError, ValueError, AttributeError) as exc:  # no questions, no comparison: not a speed-up
            if cell.get("status") == "ok":
                cell["status"] = "error"
                cell["note"] = f"exited 0 but wrote no readable {made.name} ({type(exc).__name__})"
    res["original_ratio"] = original_ratio(res.get("generate"), res["original_generate"])


def original_ratio(ours: dict[str, Any] | None, original: dict[str, Any] | None) -> dict[str, Any]:
    """Our ``generate`` against the original's, on the same pack: ``speed_x`` = its wall time / ours,
    ``cpu_x`` = its CPU time / ours, ``memory_x`` = our peak RSS / its peak RSS."""
    for name, cell in (("generate", ours), ("original generate", original)):
        if not cell or cell.get("status") != "ok":
            why = (cell or {}).get("status", "not run")
            return {"status": "unavailable", "note": f"{name}: {why}"}
    assert ours is not None and original is not None  # both checked above

    def div(a: float, b: float) -> float | None:
        return round(a / b, 2) if b else None

    return {
        "status": "ok",
        "speed_x": div(original["seconds"], ours["seconds"]),
        "cpu_x": div(original["cpu_seconds"], ours["cpu_seconds"]),
        "memory_x": div(ours["peak_rss_mb"], original["peak_rss_mb"]),
    }


def _search_stage(
    stage: Callable[[str, list[str]], dict[str, Any]],
    res: dict[str, Any],
    pack: Path,
    eval_dir: Path,
    samples: int,
    seed: int,
) -> None:
    """The search stage, over the eval's questions when there are any; apart from
    :func:`run_matrix` to keep its loop short."""
    args = [str(pack), str(samples), str(seed)]
    if (eval_dir / "questions.json").is_file():
        args.append(str(eval_dir / "questions.json"))
    r = stage("search", _probe("search", *args))
    res["search"].update(_json_out(r))


def _rescore_stage(
    stage: Callable[[str, list[str]], dict[str, Any]],
    res: dict[str, Any],
    pack: Path,
    run_dir: Path,
    eval_dir: Path,
    rescore_traces: int,
    events: int,
    timeout: float,
) -> None:
    """The rescore stage and its floor: the oracle's and a keyword run's traces replicated to
    ``rescore_traces`` lines, re-scored by ``groundeval score``, then just parsed."""
    kw = run_dir / "keyword"
    measure(
        _groundeval(
            "run",
            str(eval_dir / "questions.json"),
            "--pack",
            str(pack),
            "--agent",
            "keyword",
            "--out",
            str(kw),
            "-q",
        ),
        timeout=timeout,
    )
    traces = run_dir / "rescore-traces.jsonl"
    n = _replicate_traces([eval_dir / "traces.jsonl", kw / "traces.jsonl"], traces, rescore_traces)
    r = stage(
        "rescore",
        _groundeval(
            "score",
            str(traces),
            "--questions",
            str(eval_dir / "questions.json"),
            "--out",
            str(run_dir / "rescored"),
        ),
    )
    res["rescore"]["traces"] = n
    res["rescore"]["traces_per_s"] = round(n / r["seconds"]) if r["seconds"] else None
    f = measure(_probe("traces-floor", str(traces)), timeout=timeout)
    fl = _json_out(f)
    res["rescore_floor"] = {
        **_cell(f, events),
        **fl,
        "traces_per_s": round(n / fl["json_loads_s"]) if fl.get("json_loads_s") else None,
    }
    traces.unlink(missing_ok=True)


def run_matrix(
    *,
    scales: list[int],
    formats: list[str],
    seed: int = 0,
    style: str = "default",
    stages: list[str] | None = None,
    rescore_traces: int = 20000,
    samples: int = 200,
    workdir: Path | None = None,
    keep: bool = False,
    timeout: float = 3600.0,
    repeat: int = 1,
    progress: Callable[[str], None] | None = None,
    original_python: str | None = None,
) -> dict[str, Any]:
    """Every stage × format × scale as a fresh process, with its floor; returns a JSON-able dict.
    With ``repeat`` > 1 each stage runs that many times and the median run (by wall time) is
    reported, with every run's wall and CPU time beside it. With ``generate`` on the original
    format, the original release's generator runs beside it under ``original_python`` (else its
    rows say ``unavailable``)."""
    from .original import original_unavailable
    from .run import machine

    stages = list(stages or MATRIX_STAGES)
    say = progress or (lambda _m: None)
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="groundeval-matrix-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    cells = []
    with_original = "generate" in stages and "original" in formats
    original_note = original_unavailable(original_python) if with_original else None
    try:
        for events in scales:
            for fmt in formats:
                pack, info = _pack(workdir, fmt, events, seed, style, say)
                label = f"{fmt} {events:,}"
                res: dict[str, Any] = {"synth": info.get("synth", {})}
                run_dir = workdir / f"run-{style}-{fmt}-{events}"
                shutil.rmtree(run_dir, ignore_errors=True)
                run_dir.mkdir(parents=True)

                def stage(name: str, cmd: list[str], cwd: Path | None = None) -> dict[str, Any]:
                    say(f"[{label}] {name} ...")
                    runs = [measure(cmd, timeout=timeout, cwd=cwd) for _ in range(repeat)]
                    r = sorted(runs, key=lambda x: x["seconds"])[len(runs) // 2]  # the median run by wall time
                    res[name] = _cell(r, events)
                    if repeat > 1:
                        res[name]["runs_seconds"] = [x["seconds"] for x in runs]
                        res[name]["runs_cpu_seconds"] = [x["cpu_seconds"] for x in runs]
                    return r

                if "load" in stages:
                    _load_stage(stage, res, pack, events, timeout)
                for level in (1, 2, 3, 4):
                    if f"verify{level}" in stages:
                        stage(
                            f"verify{level}",
                            _groundeval(
                                "verify",
                                str(pack),
                                "--level",
                                str(level),
                                "--format",
                                "json",
                                "--out",
                                str(run_dir / f"verify{level}.json"),
                            ),
                        )
                questions = run_dir / "questions.json"
                if "generate" in stages:
                    _generate_stage(stage, res, pack, questions)
                    _original_stage(stage, res, fmt, pack, run_dir, original_python, original_note)
                eval_dir = run_dir / "eval"
                if "eval" in stages or "rescore" in stages:
                    stage(
                        "eval",
                        _groundeval("eval", str(pack), "--agent", "oracle", "--out", str(eval_dir), "-q", "--force"),
                    )
                if "search" in stages:
                    _search_stage(stage, res, pack, eval_dir, samples, seed)
                if "rescore" in stages and (eval_dir / "traces.jsonl").is_file():
                    _rescore_stage(stage, res, pack, run_dir, eval_dir, rescore_traces, events, timeout)
                if not keep:
                    shutil.rmtree(run_dir, ignore_errors=True)
                cells.append(
                    {"format": fmt, "events": events, "artifacts": info.get("artifacts"), "style": style, "stages": res}
                )
    finally:
        if tmp is not None:
            tmp.cleanup()
    return {
        "machine": machine(),
        "seed": seed,
        "style": style,
        "repeat": repeat,
        "load_avg_end": round(os.getloadavg()[0], 2),
        "matrix": cells,
    }


def _stage_name(label: str, key: str) -> str:
    """What a row's cells show: its stage key, except the floors (one key serves search and its floor)."""
    if label in ("search floor", "ours vs original"):
        return label
    return {"load_floor": "load floor", "rescore_floor": "rescore floor"}.get(key, key)


def _shared_cell(name: str, r: dict[str, Any] | None, empty: str) -> str | None:
    """The cells the terminal table and the Markdown table write alike (None: the caller's own)."""
    if not r:
        return empty
    if r.get("status") in ("error", "unavailable"):
        return r["status"]
    if name == "ours vs original":
        # speed and CPU: the original's time / ours (higher is better); memory: our peak RSS / its
        return f"speed {_x(r.get('speed_x'))} · CPU {_x(r.get('cpu_x'))} · memory {_x(r.get('memory_x'))}"
    if name == "search":
        return f"{r.get('p50_ms', 0):.2f} / {r.get('p99_ms', 0):.2f} ms"
    if name == "search floor":
        return f"{r.get('floor_p50_ms', 0):.2f} / {r.get('floor_p99_ms', 0):.2f} ms"
    return None


def _x(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}×"


def _fmt_stage(name: str, r: dict[str, Any] | None) -> str:
    shared = _shared_cell(name, r, "-")
    if shared is not None:
        return shared
    assert r is not None  # _shared_cell answers every empty cell
    base = f"{r['seconds']:.2f} s · {r['cpu_seconds']:.1f} cpu · {r['peak_rss_mb']:,.0f} MB"
    if name == "rescore":
        return f"{r.get('traces_per_s', 0):,}/s · {base}"
    if name == "rescore floor":
        return f"{r.get('traces_per_s', 0):,}/s (json.loads)"
    if name == "load floor":
        return (
            f"{r['seconds']:.2f} s · read_json {r.get('events_read_json_s', 0):.2f} s + "
            f"json.loads {r.get('artifacts_json_loads_s', 0):.2f} s · {r['peak_rss_mb']:,.0f} MB"
        )
    return base


ROWS = (
    ("load (Store.open)", "load"),
    ("load floor", "load_floor"),
    ("info (load + verify L1-2)", "info"),
    ("verify L1", "verify1"),
    ("verify L2", "verify2"),
    ("verify L3", "verify3"),
    ("verify L4", "verify4"),
    ("generate", "generate"),
    ("original generate", "original_generate"),
    ("ours vs original", "original_ratio"),
    ("eval oracle", "eval"),
    ("search p50 / p99", "search"),
    ("search floor", "search"),
    ("rescore", "rescore"),
    ("rescore floor", "rescore_floor"),
)


def _column_load(cell: dict[str, Any], empty: str = "-") -> Any:
    """The load average at the start of a column: its first measured stage's (``load`` when run)."""
    stages = cell["stages"]
    for key in ("load", *stages):
        if isinstance(stages.get(key), dict) and "load_avg" in stages[key]:
            return stages[key]["load_avg"]
    return empty


def render_matrix(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    m = result["machine"]
    console = Console(width=max(160, Console().width))
    table = Table(
        title=f"groundeval bench --matrix — {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
        f"DuckDB {m['duckdb']}; whole process: wall · CPU (user+sys) · peak RSS",
        title_justify="left",
    )
    table.add_column("stage")
    for c in result["matrix"]:
        table.add_column(f"{c['format']} {c['events']:,}", justify="right")
    for label, key in ROWS:
        if not any(key in c["stages"] for c in result["matrix"]):
            continue
        name = _stage_name(label, key)
        table.add_row(label, *[_fmt_stage(name, c["stages"].get(key)) for c in result["matrix"]])
    table.add_row("load avg (start of column)", *[str(_column_load(c)) for c in result["matrix"]])
    console.print(table)
    for c in result["matrix"]:
        for k, r in c["stages"].items():
            if isinstance(r, dict) and r.get("status") in ("error", "unavailable") and k != "original_ratio":
                console.print(f"[yellow]{c['format']} {c['events']:,} {k}: {r['status']}[/yellow] {r.get('note', '')}")


def _md_cell(name: str, r: dict[str, Any] | None) -> str:
    shared = _shared_cell(name, r, "–")
    if shared is not None:
        return shared
    assert r is not None  # _shared_cell answers every empty cell
    if name == "rescore floor":
        return f"{r.get('traces_per_s', 0):,} traces/s"
    if name == "load floor":
        return (
            f"{r['seconds']:.2f} s ({r.get('events_read_json_s', 0):.2f} + {r.get('artifacts_json_loads_s', 0):.2f})"
            f" · {r['peak_rss_mb']:,.0f} MB"
        )
    text = f"{r['seconds']:.2f} s · {r['cpu_seconds']:.1f} · {r['peak_rss_mb']:,.0f} MB"
    if name == "rescore":
        text = f"{r.get('traces_per_s', 0):,}/s · " + text
    elif r.get("us_per_event") is not None and name not in ("search",):
        text += f" · {r['us_per_event']:.0f} µs/ev"
    return text


def matrix_markdown(result: dict[str, Any]) -> str:
    """The matrix as a Markdown table (cells: wall · CPU user+sys · peak RSS · wall per event)."""
    cells = result["matrix"]
    head = "| stage | " + " | ".join(f"{c['format']} {c['events']:,}" for c in cells) + " |"
    lines = [head, "|---|" + "---:|" * len(cells)]
    for label, key in ROWS:
        if not any(key in c["stages"] for c in cells):
            continue
        name = _stage_name(label, key)
        lines.append(f"| {label} | " + " | ".join(_md_cell(name, c["stages"].get(key)) for c in cells) + " |")
    loads = [_column_load(c, "–") for c in cells]
    lines.append("| load average at start | " + " | ".join(str(x) for x in loads) + " |")
    return "\n".join(lines) + "\n"


def _main(argv: list[str]) -> None:
    if argv and argv[0] == "markdown":  # python -m groundeval.bench.matrix markdown bench.json
        print(matrix_markdown(json.loads(Path(argv[1]).read_text(encoding="utf-8"))), end="")
        return
    name, args = argv[0], argv[1:]
    if name == "load-floor":
        out = _probe_load_floor(args[0])
    elif name == "store-open":
        out = _probe_store_open(args[0])
    elif name == "search":
        out = _probe_search(args[0], int(args[1]), int(args[2]), args[3] if len(args) > 3 else None)
    elif name == "traces-floor":
        out = _probe_traces_floor(args[0])
    else:
        raise SystemExit(f"unknown probe {name!r}")
    print(json.dumps(out))


if __name__ == "__main__":
    _main(sys.argv[1:])
