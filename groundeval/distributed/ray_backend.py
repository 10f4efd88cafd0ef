"""The Ray backend: episodes and scoring on the workers of a Ray cluster.

``ray.init`` connects to ``address`` (else ``RAY_ADDRESS``, else it starts a local Ray
instance on this machine). Episodes: one actor per worker (``num_cpus=1``, ``concurrency``
episodes at once in it) opens the contract's DuckDB file read-only and builds the agent;
the runner's threads hand each actor a question and get its trace back, so resume,
``run.json`` and the question order of ``traces.jsonl`` are the local runner's own.
Scoring: actors holding the questions score chunks of traces (or trace lines), merged in
order. A worker that dies or fails outside the agent costs that one episode, recorded as
an errored trace (the actor restarts for the next); an agent's own exception is recorded
on the worker exactly as locally.

Other work — a world's episodes, trajectory verification — goes through :meth:`RayBackend.worker_jobs`:
one :class:`~groundeval.distributed.jobs.JobWorker` actor per worker, set up once by a function the
caller names (load the world, build the agent) and then given items in order; a job whose worker
died or raised is handed back to the caller (an errored episode, a batch verified on the driver).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import ray
from ray.exceptions import GetTimeoutError, RayError, RayTaskError

from ..errors import ContractError, GroundevalError, ProviderError, UsageError
from .backend import Episodes, pairs_in_order
from .jobs import JobFailure, JobWorker, WorkerFailure
from .worker import AgentSpec, EpisodeWorker, ScoreWorker, StoreSpec, line_chunks, merge_lines, prepare_store_file

START_TIMEOUT_S = 300.0  # workers must be up by then (a cluster short of CPUs never starts them)
CHUNK_LINES = 1000  # trace lines (or traces) per scoring task
CONNECT_TIMEOUT_S = 10.0  # a --ray-address that does not answer within this is refused
POLL_S = 0.25  # how often a waiting episode checks the run's stop flag (Ctrl-C)


class _Fails:
    """Stands in for the agent on the driver to record a worker failure as an errored episode."""

    def __init__(self, name: str, exc: Exception):
        self.name = name
        self._exc = exc

    def run(self, episode: Any) -> None:
        raise self._exc


def _check_reachable(address: str) -> None:
    """Fail in seconds on a ``host:port`` (or ``ray://host:port``) nothing listens on: Ray itself
    retries such an address for minutes."""
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local" and the like: Ray resolves them
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise UsageError.single(
            "--ray-address",
            f"cannot reach Ray at {address}: {exc.strerror or exc} (is the "
            "cluster up? set RAY_ADDRESS or --ray-address to its head node)",
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class RayBackend:
    """``backend="ray"``: see the module docstring. ``workers`` defaults to the cluster's CPUs."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        runtime_env: dict[str, Any] | None = None,
        chunk_lines: int = CHUNK_LINES,
    ):
        if workers is not None and workers < 1:
            raise UsageError.single("--workers", "must be at least 1")
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.requested = workers
        self.runtime_env = runtime_env
        self.chunk_lines = max(1, chunk_lines)
        self._started = False
        self._workers: int | None = None
        self._tmp: str | None = None

    # ------------------------------------------------------------------ cluster

    @property
    def workers(self) -> int:
        self._connect()
        assert self._workers is not None
        return self._workers

    def _connect(self) -> None:
        if self._workers is not None:
            return
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.ERROR,
                "runtime_env": self.runtime_env,
            }
            if self.address is None:  # a local instance: as many CPUs as workers asked for
                kwargs["num_cpus"] = max(os.cpu_count() or 1, self.requested or 0)
            else:
                _check_reachable(self.address)
            try:
                ray.init(address=self.address or "local", **kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise UsageError.single(
                    "--ray-address",
                    f"cannot start or reach Ray at {self.address or 'a local instance'}: {_first_line(exc)}",
                ) from None
            self._started = True
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if self.requested is not None and self.requested > cpus:
            raise UsageError.single(
                "--workers", f"{self.requested} workers, but the Ray cluster has {cpus} CPUs (each worker takes one)"
            )
        self._workers = self.requested or max(1, cpus)

    def _connected_nodes(self) -> int:
        self._connect()
        return sum(1 for n in ray.nodes() if n.get("Alive"))

    def close(self) -> None:
        """Shut down the Ray instance this backend started (one it found running is left alone)."""
        if self._started and ray.is_initialized():
            ray.shutdown()
        self._started, self._workers = False, None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> "RayBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ runs

    def store_file(self, db: str | Path | None) -> Path:
        """``db`` as an absolute path (workers on other nodes open the same path); without one, a
        scratch file — only on a one-node cluster, where the workers see this machine's disk."""
        if db is not None:
            return Path(db).resolve()
        nodes = 1 if self.address is None and not ray.is_initialized() else self._connected_nodes()
        if nodes > 1:
            raise UsageError.single(
                "--db",
                f"the Ray cluster has {nodes} nodes: pass --db PATH on storage every "
                "node mounts at the same path (workers open the store from that file)",
            )
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="groundeval-ray-")
        return Path(self._tmp) / "contract.duckdb"

    @contextmanager
    def episodes(
        self,
        store: Any,
        agent: Any,
        *,
        db: str | Path,
        spec: str | None = None,
        options: dict[str, Any] | None = None,
        concurrency: int = 1,
    ) -> Iterator[Episodes]:
        """``store`` was loaded into ``db`` (:meth:`store_file`): its BM25 index and search tables
        are built into the file, which the driver and every worker then open read-only."""
        from ..store.store import Store

        agent_spec = self._agent_spec(agent, spec, options)
        digest = prepare_store_file(store)
        driver_store = Store.open_db(db)
        self._connect()
        actor_class = ray.remote(EpisodeWorker).options(
            num_cpus=1, max_concurrency=concurrency, max_restarts=-1, max_task_retries=0
        )
        actors = [actor_class.remote(StoreSpec(str(db), digest), agent_spec) for _ in range(self.workers)]
        try:
            self._ready(actors)
            run = _EpisodeDispatch(actors, getattr(agent, "name", type(agent).__name__))
            yield Episodes(
                store=driver_store,
                agent=agent,
                concurrency=len(actors) * concurrency,
                execute=run.execute,
                workers=len(actors),
            )
        finally:
            for a in actors:
                ray.kill(a)
            driver_store.close()

    def _agent_spec(self, agent: Any, spec: str | None, options: dict[str, Any] | None) -> AgentSpec:
        if spec is not None:
            return AgentSpec(name=spec, options={k: v for k, v in (options or {}).items() if v is not None})
        return AgentSpec(pickled=self.pickled(agent))

    def pickled(self, obj: Any, flag: str = "--agent", what: str = "agent") -> bytes:
        """``obj`` as Ray's cloudpickle writes it (a worker reads it back with ``pickle.loads``); one
        that cannot be pickled is a :class:`UsageError` at ``flag`` saying to give it by name."""
        try:
            return ray.cloudpickle.dumps(obj)
        except Exception as exc:  # noqa: BLE001 - whatever pickling raises, the answer is the same
            name = getattr(obj, "name", type(obj).__name__)
            raise UsageError.single(
                flag,
                f"{what} {name!r} cannot be sent to Ray workers ({type(exc).__name__}: "
                f"{_first_line(exc)}); give it by name (a built-in, provider:model or "
                "module:factory) so each worker builds its own",
            ) from None

    def _ready(self, actors: list[Any]) -> None:
        """Every worker started, or the first one's error (a located one as it is)."""
        try:
            ray.get([a.ready.remote() for a in actors], timeout=START_TIMEOUT_S)
        except RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, GroundevalError):
                raise cause from None
            raise ContractError.single("ray", f"a worker could not start: {_first_line(cause or exc)}") from None
        except GetTimeoutError:
            raise ContractError.single("ray", f"the workers did not start within {START_TIMEOUT_S:.0f}s") from None
        except RayError as exc:
            raise ContractError.single("ray", f"a worker could not start: {_first_line(exc)}") from None

    # ------------------------------------------------------------------ jobs

    @contextmanager
    def worker_jobs(
        self,
        setup: Callable[..., Any],
        args: tuple[Any, ...],
        job: Callable[[Any, Any], Any],
        *,
        concurrency: int = 1,
        queued: int = 0,
    ) -> Iterator["JobDispatch"]:
        """One :class:`~groundeval.distributed.jobs.JobWorker` actor per worker (``setup(*args)``
        once in each, ``concurrency`` jobs at once in it, ``queued`` more waiting in its queue so it
        never idles between two: a worker that dies loses those too, so only for jobs the caller can
        redo), every one started before this yields (else the first one's error, a located one as
        it is); killed on exit."""
        self._connect()
        actor_class = ray.remote(JobWorker).options(
            num_cpus=1, max_concurrency=concurrency, max_restarts=-1, max_task_retries=0
        )
        actors = [actor_class.remote(setup, args, job) for _ in range(self.workers)]
        dispatch = JobDispatch(actors, concurrency + max(0, queued))
        try:
            self._ready(actors)
            yield dispatch
        finally:
            dispatch.stop.set()
            for a in actors:
                ray.kill(a)

    # ------------------------------------------------------------------ scoring

    def score(self, questions: Any, traces: list[Any], config: Any = None, profile: str | None = None) -> list[Any]:
        pairs = pairs_in_order(questions, traces)
        if not pairs:
            return []
        qmap = {q.id: q for q in questions.questions}
        chunks = [[t for _q, t in pairs[i : i + self.chunk_lines]] for i in range(0, len(pairs), self.chunk_lines)]
        with self._scorers(qmap, config, profile) as (actors, here):
            return [s for _chunk, part in _ordered(actors, "score_traces", chunks, here) for s in part]

    def rescore(
        self,
        path: str | Path,
        questions: dict[str, Any],
        config: Any = None,
        *,
        contract_digest: str | None = None,
        profile: str | None = None,
    ) -> Iterator[tuple[Any, Any, bytes]]:
        """Lines read here, parsed and scored on the workers, checked for repeats here in file order:
        the same results and the same first error as ``scoring.io.iter_rescore_lines``."""
        from ..trace.io import iter_trace_lines

        path = Path(path)
        chunks = line_chunks(iter_trace_lines(path), self.chunk_lines)
        first = next(chunks, None)  # a missing file fails here, before any worker starts
        if first is None:
            return
        with self._scorers(questions, config, profile, contract_digest, str(path)) as (actors, here):
            yield from merge_lines(path, _ordered(actors, "score_lines", _chain(first, chunks), here))

    @contextmanager
    def _scorers(
        self,
        questions: dict[str, Any],
        config: Any,
        profile: str | None,
        digest: str | None = None,
        path: str = "traces",
    ) -> Iterator[tuple[list[Any], ScoreWorker]]:
        """Score actors, and the same scorer in this process for a chunk whose worker died (scoring is
        pure: the driver's result is the worker's)."""
        self._connect()
        ref = ray.put(questions)  # shipped once, read by every worker
        actor_class = ray.remote(ScoreWorker).options(num_cpus=1)
        actors = [actor_class.remote(ref, config, profile, digest, path) for _ in range(self.workers)]
        try:
            yield actors, ScoreWorker(questions, config, profile, digest, path)
        finally:
            for a in actors:
                ray.kill(a)


class _ActorPerThread:
    """Binds each calling thread to one of ``actors``, in turn, for the thread's life: a thread
    waits on one worker at a time, so a worker that dies costs only that thread's job."""

    def __init__(self, actors: list[Any]):
        self.actors = actors
        self._local = threading.local()
        self._next = 0
        self._lock = threading.Lock()

    def _actor(self) -> Any:
        actor = getattr(self._local, "actor", None)
        if actor is None:
            with self._lock:
                actor = self._local.actor = self.actors[self._next % len(self.actors)]
                self._next += 1
        return actor


class _EpisodeDispatch(_ActorPerThread):
    """``execute`` for the runner: each runner thread keeps one actor and waits on it."""

    def __init__(self, actors: list[Any], agent_name: str):
        super().__init__(actors)
        self.agent_name = agent_name

    def execute(
        self,
        store: Any,
        question: Any,
        agent: Any,
        *,
        mode: str,
        max_steps: int,
        timeout: float | None,
        stop: threading.Event | None = None,
        trial: int = 0,
        seed: int | None = None,
    ) -> Any:
        from ..agents.runner import EpisodeStopped, run_episode

        if stop is not None and stop.is_set():
            raise EpisodeStopped()
        actor = self._actor()
        ref = actor.run.remote(question, mode=mode, max_steps=max_steps, timeout=timeout, trial=trial, seed=seed)
        while not ray.wait([ref], timeout=POLL_S)[0]:
            if stop is not None and stop.is_set():
                raise EpisodeStopped()
        try:
            return ray.get(ref)
        except RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, ProviderError) and cause.fatal:
                raise cause from None  # stops the run, as it does locally
            failure = WorkerFailure(
                f"the Ray worker failed outside the agent: {type(cause or exc).__name__}: {_first_line(cause or exc)}"
            )
        except RayError as exc:
            failure = WorkerFailure(f"the Ray worker died: {type(exc).__name__}: {_first_line(exc)}")
            _await_restart(actor)  # this thread's next episode must not land on the worker while it restarts
        # recorded as the local runner records an agent that raised: status error, the reason in the trace
        return run_episode(
            store, question, _Fails(self.agent_name, failure), mode=mode, max_steps=max_steps, trial=trial, seed=seed
        )


class JobDispatch(_ActorPerThread):
    """Items through :class:`JobWorker` actors, results in the items' order. ``per_actor`` driver
    threads per actor, each bound to one actor and waiting on one job at a time, so a worker that
    dies costs only the jobs sent to it (one with ``per_actor`` 1); the thread then waits for
    the worker's restart before its next job."""

    def __init__(self, actors: list[Any], per_actor: int = 1):
        super().__init__(actors)
        self.workers = len(actors)
        self.slots = len(actors) * max(1, per_actor)
        self.stop = threading.Event()

    def map(self, items: Iterable[Any], on_failure: Callable[[Any, JobFailure], Any]) -> Iterator[Any]:
        """``job(held, item)`` of each item, in order, at most two per slot read ahead (a long input
        is never held whole). A job that could not run — its worker died, or raised — gives
        ``on_failure(item, failure)`` instead: a result, or raise to stop."""
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=self.slots, thread_name_prefix="groundeval-ray")
        pending: deque[Any] = deque()
        try:
            for item in items:
                pending.append(pool.submit(self._one, item, on_failure))
                if len(pending) >= 2 * self.slots:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            if pending:  # stopped early (an error, Ctrl-C): threads still waiting give up
                self.stop.set()
            pool.shutdown(wait=True, cancel_futures=True)

    def _one(self, item: Any, on_failure: Callable[[Any, JobFailure], Any]) -> Any:
        if self.stop.is_set():
            raise JobStopped()
        actor = self._actor()
        ref = actor.run.remote(item)
        while not ray.wait([ref], timeout=POLL_S)[0]:
            if self.stop.is_set():
                raise JobStopped()
        try:
            return ray.get(ref)
        except RayTaskError as exc:
            cause = getattr(exc, "cause", None) or exc
            failure = JobFailure(
                died=False, error=cause, message=f"the Ray worker failed: {type(cause).__name__}: {_first_line(cause)}"
            )
        except RayError as exc:
            failure = JobFailure(
                died=True, error=exc, message=f"the Ray worker died: {type(exc).__name__}: {_first_line(exc)}"
            )
            _await_restart(actor)  # this thread's next job must not land on the worker while it restarts
        return on_failure(item, failure)


class JobStopped(Exception):
    """A job not run because the dispatch stopped (the caller stopped reading its results)."""


def _await_restart(actor: Any) -> None:
    """Wait until a restarting actor answers again (or START_TIMEOUT_S passes, or it cannot start)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            ray.get(actor.ready.remote(), timeout=max(1.0, deadline - time.monotonic()))
            return
        except RayTaskError:  # it restarted but cannot set up: its episodes will say why
            return
        except (GetTimeoutError, RayError):
            time.sleep(POLL_S)


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _ordered(actors: list[Any], method: str, items: Iterable[Any], here: Any) -> Iterator[tuple[Any, Any]]:
    """(item, result) in the order of ``items``, round-robin over ``actors``, two tasks in flight per
    actor; a chunk whose actor died is done by ``here`` (the same worker class, in this process)."""
    pending: deque[tuple[Any, Any]] = deque()
    for i, item in enumerate(items):
        pending.append((item, getattr(actors[i % len(actors)], method).remote(item)))
        if len(pending) >= 2 * len(actors):
            yield _get(*pending.popleft(), getattr(here, method))
    while pending:
        yield _get(*pending.popleft(), getattr(here, method))


def _get(item: Any, ref: Any, locally: Any) -> tuple[Any, Any]:
    try:
        return item, ray.get(ref)
    except RayTaskError as exc:  # the scorer itself raised: the same error as locally
        cause = getattr(exc, "cause", None)
        if cause is not None:
            raise cause from None
        raise
    except RayError:  # the worker died (or its result was lost): a pure function, so redo it here
        return item, locally(item)
