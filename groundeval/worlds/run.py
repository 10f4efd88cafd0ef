"""Running an agent on a world: every task x trial, ``traces.jsonl``, verdicts and reports.

Episodes run on ``concurrency`` threads, each on its own lane of the world's state; each
finished trace is appended at once (a killed run keeps them; ``resume`` runs only the missing
ones), and at the end every file is rewritten in task order, so the outputs are byte-identical
whatever the concurrency, resumption or ``PYTHONHASHSEED``. Wall-clock time goes to
``run.json`` only.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from ..errors import ContractError, UsageError
from .agents import make_agent
from .episode import run_episode
from .load import NAMED_WORLDS, World, load_world
from .model import WorldTask, WorldTrace, WorldVerdict
from .scorecard import WorldReport, render_html, render_markdown, scorecard
from .simulator import DeterministicUser, UserSimulator
from .verdict import verdict

__all__ = ["WorldRunResult", "dumps", "fingerprint", "read_traces", "run_world", "score_world", "worker_source"]


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
    backend: Any = None,
) -> WorldRunResult:
    """Run ``agent`` (a baseline name, ``module:factory``, or an object with ``run(episode)``)
    on every task (or ``task_ids``) ``trials`` times; write traces, verdicts and reports in ``out``.
    ``backend="ray"`` (or a backend from :func:`groundeval.distributed.get_backend`) runs the
    episodes on Ray workers, ``concurrency`` at once in each: the same traces, verdicts and
    reports (docs/ray.md)."""
    from ..distributed import get_backend

    be = get_backend(backend)
    own = not isinstance(world, World)
    w = load_world(world) if own else world
    try:
        opts = agent_options or {}
        remote = None if be.name == "local" else _RemoteEpisodes(be, world, w)
        return _run(
            w, agent, Path(out), trials, concurrency, resume, overwrite, simulator, task_ids, on_progress, opts, remote
        )
    finally:
        if be is not backend:  # made here from a name: this call owns it
            be.close()
        if own:
            w.close()


def _run(w, agent, out, trials, concurrency, resume, overwrite, simulator, task_ids, on_progress, opts, remote=None):
    sim = simulator or DeterministicUser()
    if isinstance(agent, str):
        make_agent(agent, **opts)  # a bad name is a usage error before anything is written
    factory = (lambda: make_agent(agent, **opts)) if isinstance(agent, str) else (lambda: agent)
    agent_name = agent if isinstance(agent, str) else getattr(agent, "name", type(agent).__name__)
    if remote is not None:
        remote.prepare(agent, opts, simulator)
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

        if remote is not None and todo:  # Ray workers run the episodes; traces come back in job order
            with remote.start(concurrency) as episodes:
                keep(episodes(todo, factory, sim))
        elif concurrency > 1 and len(todo) > 1:
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
    if remote is not None:  # a run on another backend says so (as a pack's run.json does)
        info.update(remote.settings)
    _write_atomic(out / "run.json", json.dumps(info, indent=2, sort_keys=True) + "\n")
    return result


def worker_source(world: str | Path) -> str:
    """How a worker names the world the driver loaded from ``world``: ``tau2:<domain>`` and a
    bundled world's name as they are (each worker finds its own copy), a folder by its absolute
    path (a worker's working folder is not the driver's; on a cluster, the same path on every node)."""
    text = str(world)
    if text.startswith(tuple(NAMED_WORLDS)) or not Path(world).exists():
        return text
    return str(Path(world).resolve())


def fingerprint(w: World) -> str:
    """What makes two loadings of a world the same world: its manifest, policy, tasks and initial
    state (a Ray worker holding another refuses to start)."""
    data = {
        "manifest": w.manifest.model_dump(mode="json"),
        "policy": w.policy,
        "tasks": [t.model_dump(mode="json") for t in w.tasks],
        "digest": w.digest,
    }
    return hashlib.sha256(dumps(data).encode()).hexdigest()


class _RemoteEpisodes:
    """Episodes on a backend's workers (``worker_jobs``): each worker loads the world once (by its
    folder's path, a bundled name or ``tau2:<domain>``), builds the agent — by name on the worker,
    else unpickled — and runs ``(task id, trial)`` jobs; a job whose worker died or failed outside
    the agent is recorded here as an errored episode, as an agent that raised is."""

    def __init__(self, be: Any, world: Any, w: World):
        if not hasattr(be, "worker_jobs"):
            raise UsageError.single("--backend", f"the {be.name!r} backend cannot run world episodes")
        self.be, self.w = be, w
        self.source = worker_source(w.folder if isinstance(world, World) else world)
        self.settings: dict[str, Any] = {"backend": be.name}

    def prepare(self, agent: Any, opts: dict[str, Any], simulator: Any) -> None:
        """What workers are sent, made before anything is written: an agent or simulator object
        that cannot be pickled, a cluster out of reach or short of CPUs, is a usage error here."""
        getattr(self.be, "workers", None)  # connects (Ray: starts a local instance, or joins the cluster)
        if isinstance(agent, str):
            self.spec: tuple[Any, ...] = (agent, opts, None)
        else:
            self.spec = (None, {}, self.be.pickled(agent))
        self.sim = None if simulator is None else self.be.pickled(simulator, "--simulator", "simulator")

    @contextmanager
    def start(self, concurrency: int) -> Iterator[Callable]:
        args = (self.source, fingerprint(self.w), self.spec, self.sim, concurrency)
        with self.be.worker_jobs(_worker_setup, args, _worker_episode, concurrency=concurrency) as dispatch:
            self.settings.update({"workers": dispatch.workers, "concurrency": concurrency})

            def episodes(todo: list, factory: Callable[[], Any], sim: UserSimulator) -> Iterator[WorldTrace]:
                one = factory()
                name = getattr(one, "name", type(one).__name__)  # the name a trace of it carries

                def lost(job: tuple[str, int], failure: Any) -> WorldTrace:
                    why = failure.message
                    if not failure.died:
                        err = failure.error
                        why = f"the Ray worker failed outside the agent: {type(err).__name__}: {err}"
                    return run_episode(self.w, self.w.task(job[0]), _Fails(name, why), simulator=sim, trial=job[1])

                return dispatch.map([(t.id, k) for t, k in todo], lost)

            yield episodes


class _Fails:
    """Stands in for the agent here to record a job the workers could not run as an errored episode."""

    def __init__(self, name: str, why: str):
        self.name = name
        self.why = why

    def run(self, episode: Any) -> None:
        from ..distributed.jobs import WorkerFailure

        raise WorkerFailure(self.why)


@dataclass
class _Held:
    world: World
    tasks: dict[str, WorldTask]
    factory: Callable[[], Any]
    simulator: UserSimulator


def _worker_setup(source: str, digest: str, spec: tuple, simulator: bytes | None, concurrency: int) -> _Held:
    """On a Ray worker, once: the world loaded and checked to be the driver's, the agent's factory."""
    import pickle

    w = load_world(source, check_gold=False)  # the driver checked the gold replays
    try:
        if fingerprint(w) != digest:
            raise ContractError.single(
                source, f"the world on worker {socket.gethostname()} differs from the run's (another version?)"
            )
        name, opts, pickled = spec
        if name is not None:
            make_agent(name, **opts)  # a module the worker cannot import: its error before any episode
            factory = lambda: make_agent(name, **opts)  # noqa: E731 - a fresh agent per episode, as locally
        else:
            obj = pickle.loads(pickled)
            factory = lambda: obj  # noqa: E731 - one object for every episode, as locally
        sim = pickle.loads(simulator) if simulator is not None else DeterministicUser()
        warm = getattr(w.state, "warm", None)
        if concurrency > 1 and warm is not None:
            warm(concurrency)
    except BaseException:
        w.close()
        raise
    return _Held(w, {t.id: t for t in w.tasks}, factory, sim)


def _worker_episode(held: _Held, job: tuple[str, int]) -> WorldTrace:
    """On a Ray worker: one episode, its trace back (an agent that raises is recorded in it)."""
    task_id, trial = job
    return run_episode(held.world, held.tasks[task_id], held.factory(), simulator=held.simulator, trial=trial)


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
