"""Running an agent on a world: every task x trial, ``traces.jsonl``, verdicts and reports.

Episodes run on ``concurrency`` threads, each on its own lane of the world's state; each
finished trace is appended at once (a killed run keeps them; ``resume`` runs only the missing
ones), and at the end every file is rewritten in task order, so the outputs are byte-identical
whatever the concurrency, resumption or ``PYTHONHASHSEED``. Wall-clock time goes to
``run.json`` only.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from ..errors import ContractError, UsageError
from .agents import make_agent
from .episode import run_episode
from .load import World, load_world
from .model import WorldTrace, WorldVerdict
from .scorecard import WorldReport, render_html, render_markdown, scorecard
from .simulator import DeterministicUser, UserSimulator
from .verdict import verdict

__all__ = ["WorldRunResult", "dumps", "read_traces", "run_world", "score_world"]


def dumps(model: Any) -> str:
    """One canonical JSON line (sorted keys, ASCII: agent text of any kind is kept and cannot break the file)."""
    data = model.model_dump(mode="json") if hasattr(model, "model_dump") else model
    return json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


@dataclass
class WorldRunResult:
    out_dir: Path
    report: WorldReport
    traces: list[WorldTrace]
    verdicts: list[WorldVerdict]


def read_traces(path: Path, *, lenient: bool = False) -> list[WorldTrace]:
    """The traces of a file; a bad line is a located error (``lenient``: a torn last line of
    an interrupted run is dropped)."""
    out = []
    lines = path.read_text(encoding="utf-8").split("\n")
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:  # Python's JSON reader: agent text may hold lone surrogates (written as escapes)
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            if lenient and n >= len(lines) - 1:
                break
            raise ContractError.single(str(path), f"not valid JSON: {getattr(exc, 'msg', exc)}", line=n) from None
        try:
            out.append(WorldTrace.model_validate(data))
        except ValidationError as exc:
            if lenient and n >= len(lines) - 1:
                break
            err = exc.errors()[0]
            raise ContractError.single(
                str(path), err["msg"], line=n, field=".".join(str(x) for x in err["loc"]) or None
            ) from None
    return out


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def run_world(
    world: World | str | Path,
    agent: str | Any,
    out: str | Path,
    *,
    trials: int = 1,
    concurrency: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    simulator: UserSimulator | None = None,
    task_ids: list[str] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    agent_options: dict[str, Any] | None = None,
) -> WorldRunResult:
    """Run ``agent`` (a baseline name, ``module:factory``, or an object with ``run(episode)``)
    on every task (or ``task_ids``) ``trials`` times; write traces, verdicts and reports in ``out``."""
    own = not isinstance(world, World)
    w = load_world(world) if own else world
    try:
        opts = agent_options or {}
        return _run(w, agent, Path(out), trials, concurrency, resume, overwrite, simulator, task_ids, on_progress, opts)
    finally:
        if own:
            w.close()


def _run(w, agent, out, trials, concurrency, resume, overwrite, simulator, task_ids, on_progress, opts):
    sim = simulator or DeterministicUser()
    if isinstance(agent, str):
        make_agent(agent, **opts)  # a bad name is a usage error before anything is written
    factory = (lambda: make_agent(agent, **opts)) if isinstance(agent, str) else (lambda: agent)
    agent_name = agent if isinstance(agent, str) else getattr(agent, "name", type(agent).__name__)
    tasks = w.tasks if task_ids is None else [w.task(t) for t in task_ids]
    jobs = [(t, k) for t in tasks for k in range(trials)]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "traces.jsonl"
    done = _kept(w, path, agent_name, jobs, resume, overwrite)
    todo = [(t, k) for t, k in jobs if (t.id, k) not in done]
    started = time.perf_counter()
    if not resume or not path.exists():
        path.write_text("", encoding="utf-8")
    else:  # keep only the complete lines we kept
        _write_atomic(path, "".join(dumps(tr) + "\n" for tr in done.values()))

    def one(job):
        task, trial = job
        return run_episode(w, task, factory(), simulator=sim, trial=trial)

    finished = len(jobs) - len(todo)
    with open(path, "a", encoding="utf-8") as fh:

        def keep(results: Any) -> None:  # each trace appended as it ends (a killed run keeps it)
            nonlocal finished
            for tr in results:
                fh.write(dumps(tr) + "\n")
                fh.flush()
                done[(tr.task_id, tr.trial)] = tr
                finished += 1
                if on_progress:
                    on_progress(finished, len(jobs))

        if concurrency > 1 and len(todo) > 1:
            warm = getattr(w.state, "warm", None)  # DuckDB: make the lanes before the clock matters
            if warm is not None:
                warm(min(concurrency, len(todo)))
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                keep(pool.map(one, todo))
        else:
            keep(map(one, todo))
    traces = [done[(t.id, k)] for t, k in jobs]
    _write_atomic(path, "".join(dumps(tr) + "\n" for tr in traces))
    result = _score(w, traces, out)
    info = {
        "kind": "world-run",
        "world": w.name,
        "agent": agent_name,
        "episodes_total": len(jobs),
        "episodes_run": len(todo),
        "wall_clock_s": round(time.perf_counter() - started, 3),
        "status": "failed" if traces and all(t.ended_by == "error" for t in traces) else "completed",
    }
    _write_atomic(out / "run.json", json.dumps(info, indent=2, sort_keys=True) + "\n")
    return result


def _kept(w: World, path: Path, agent_name: str, jobs, resume: bool, overwrite: bool) -> dict:
    """The finished traces a resumed run keeps (none otherwise); refuses to mix agents or worlds."""
    done: dict[tuple[str, int], WorldTrace] = {}
    if not (path.exists() and path.stat().st_size):
        return done
    if not resume:
        if not overwrite:
            raise UsageError.single(
                "--out", f"{path} exists: pass --resume to complete it or --overwrite to replace it"
            )
        return done
    wanted = {(t.id, k) for t, k in jobs}
    for tr in read_traces(path, lenient=True):
        if tr.agent != agent_name or tr.world != w.name:
            raise UsageError.single(
                "--out", f"{path} holds traces of agent {tr.agent!r} on world {tr.world!r}: use another --out"
            )
        if (tr.task_id, tr.trial) not in wanted:  # a task the world no longer has, or a trial not asked for
            continue
        if tr.world_digest == w.state_for(w.task(tr.task_id)).initial_digest:  # a changed world's: run again
            done[(tr.task_id, tr.trial)] = tr
    return done


def _score(w: World, traces: list[WorldTrace], out: Path) -> WorldRunResult:
    verdicts = [verdict(w, w.task(t.task_id), t) for t in traces]
    report = scorecard(verdicts, traces)
    _write_atomic(out / "verdicts.jsonl", "".join(dumps(v) + "\n" for v in verdicts))
    _write_atomic(out / "report.json", json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    _write_atomic(out / "report.md", render_markdown(report))
    _write_atomic(out / "report.html", render_html(report, traces, verdicts))
    return WorldRunResult(out_dir=out, report=report, traces=traces, verdicts=verdicts)


def score_world(world: World | str | Path, traces_path: str | Path, out: str | Path | None = None) -> WorldRunResult:
    """Re-score saved world traces (no agent runs): verdicts and reports in ``out`` (default: beside the traces)."""
    own = not isinstance(world, World)
    w = load_world(world) if own else world
    try:
        traces = read_traces(Path(traces_path))
        if not traces:
            raise ContractError.single(str(traces_path), "no traces")
        ids = {t.id for t in w.tasks}
        seen: dict[tuple[str, int], int] = {}
        for n, t in enumerate(traces, start=1):
            where = {"record": str(n)}
            if t.world != w.name:
                raise ContractError.single(str(traces_path), f"a trace of world {t.world!r}, not {w.name!r}", **where)
            if t.task_id not in ids:
                raise ContractError.single(
                    str(traces_path), f"no task {t.task_id!r} in world {w.name}", field="task_id", **where
                )
            if t.agent != traces[0].agent:
                raise ContractError.single(
                    str(traces_path),
                    f"a trace of agent {t.agent!r} among traces of {traces[0].agent!r}: one agent per file",
                    field="agent",
                    **where,
                )
            if (t.task_id, t.trial) in seen:
                raise ContractError.single(
                    str(traces_path),
                    f"task {t.task_id!r} trial {t.trial} again (record {seen[t.task_id, t.trial]} has it)",
                    field="trial",
                    **where,
                )
            seen[t.task_id, t.trial] = n
            task = w.task(t.task_id)
            if t.world_digest != w.state_for(task).initial_digest:
                raise ContractError.single(
                    str(traces_path),
                    f"trace of task {t.task_id!r} was recorded on another initial state of {w.name} "
                    f"({t.world_digest[:16]}, this world: {w.state_for(task).initial_digest[:16]}): "
                    "the world changed since",
                    record=str(n),
                    field="world_digest",
                )
        dest = Path(out) if out is not None else Path(traces_path).parent
        dest.mkdir(parents=True, exist_ok=True)
        return _score(w, traces, dest)
    finally:
        if own:
            w.close()
