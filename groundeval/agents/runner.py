"""Running an agent over many questions without losing work.

Each finished episode is appended to ``traces.jsonl`` (one line, flushed and fsynced)
by the main thread as soon as it finishes, so a killed run loses at most the episodes
in flight; ``resume`` skips the episodes already there (a torn last line from a kill
is cut off first). With ``trials=K`` every question is run K times (trial 0..K-1, each
its own trace); an episode is one (question, trial). Concurrency uses threads: the store hands each thread its own
cursor. A per-episode ``timeout`` is enforced cooperatively (the agent's next tool
call after the deadline ends the episode; LLM requests are bounded by it) and, as a
last resort, by abandoning an agent thread that does not come back.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn

from ..errors import ContractError, EpisodeInterrupt, ProviderError, UsageError
from ..questions.model import Question, QuestionSet
from ..trace.model import Trace
from ..trace.text import escape
from .base import MODES, describe
from .runinfo import ERRORED_STATUSES, RunInfo, Session, now, read_run_info, versions, write_run_info

TRACES = "traces.jsonl"
RUN_INFO = "run.json"
GRACE_S = 5.0  # how long past its deadline an agent thread may take before it is abandoned
STOP_WAIT_S = 5.0  # on Ctrl-C, how long to wait for episodes in flight to notice and stop


class EpisodeTimeout(EpisodeInterrupt):
    """Raised into an agent that calls a tool after its episode's deadline (an
    :class:`~groundeval.errors.EpisodeInterrupt`: the agent's ``except Exception`` cannot swallow it)."""


class EpisodeStopped(EpisodeInterrupt):
    """Raised into an agent that calls a tool after the run was told to stop (Ctrl-C)."""


class _Deadline:
    """The episode as the agent sees it: every call first checks the deadline and the stop flag."""

    _CHECKED = frozenset({"search", "fetch", "submit", "call", "context"})

    def __init__(
        self,
        episode: Any,
        deadline: float | None,
        stop: threading.Event | None,
        *,
        trial: int = 0,
        seed: int | None = None,
    ):
        self._episode = episode
        self.deadline = deadline
        self._stop = stop
        self.trial = trial  # which repeated trial this episode is (0..K-1)
        self.seed = seed  # the trial's seed for agents that take one (None in a single-trial run)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._episode, name)
        if name in self._CHECKED and callable(value) and (self.deadline is not None or self._stop is not None):

            def checked(*args: Any, **kwargs: Any) -> Any:
                if self._stop is not None and self._stop.is_set():
                    raise EpisodeStopped()
                if self.deadline is not None and time.monotonic() > self.deadline:
                    raise EpisodeTimeout()
                return value(*args, **kwargs)

            return checked
        return value


def _episode_class():
    from ..runtime.episode import Episode

    return Episode


def trial_seed(trial: int, trials: int) -> int | None:
    """The seed an agent that takes one gets for ``trial`` of ``trials``: the trial index
    (so trial i of any run is reproducible); None in a single-trial run."""
    return trial if trials > 1 else None


def run_episode(
    store: Any,
    question: Question,
    agent: Any,
    *,
    mode: str = "tool",
    max_steps: int = 30,
    timeout: float | None = None,
    stop: threading.Event | None = None,
    trial: int = 0,
    seed: int | None = None,
) -> Trace:
    """One question, one agent, one finalised trace. Agent errors are recorded, never raised
    (a fatal :class:`ProviderError` — bad key, unknown model — is re-raised to stop the run,
    and :class:`EpisodeStopped` when ``stop`` was set mid-episode). ``trial`` is recorded
    in the trace; the agent sees ``episode.trial`` and ``episode.seed``."""
    Episode = _episode_class()
    name = getattr(agent, "name", type(agent).__name__)
    deadline = time.monotonic() + timeout if timeout else None
    box: dict[str, BaseException] = {}
    episode = Episode(store, question, mode=mode, agent=name, max_steps=max_steps)
    episode.trace.trial = trial
    view = _Deadline(episode, deadline, stop, trial=trial, seed=seed)

    def drive() -> None:
        try:
            agent.run(view)
        except BaseException as exc:  # noqa: BLE001 - recorded in the trace below
            box["error"] = exc

    abandoned = False
    with episode:
        if deadline is None:
            drive()
        else:
            worker = threading.Thread(target=drive, name=f"episode-{question.id[:12]}", daemon=True)
            worker.start()
            worker.join(timeout + GRACE_S)
            abandoned = worker.is_alive()
    trace = _snapshot(episode) if abandoned else episode.trace
    exc = box.get("error")
    if isinstance(exc, EpisodeStopped) or (isinstance(exc, ProviderError) and exc.fatal):
        raise exc
    late = deadline is not None and time.monotonic() >= deadline
    # timed out: cut off, or back past its deadline (by a provider error, or with no answer)
    late_empty = exc is None and late and trace.final_answer is None
    if abandoned or isinstance(exc, EpisodeTimeout) or (isinstance(exc, ProviderError) and late) or late_empty:
        status, detail = "timeout", f"episode timed out after {timeout}s"
    elif exc is not None:
        status, detail = "error", "".join(traceback.format_exception_only(type(exc), exc)).strip()
    else:
        return trace
    if trace.final_answer is None:  # an accepted answer stands, whatever happened after it
        trace.status = status
    trace.messages.append({"role": "runner", "error": escape(detail)})
    return trace


def _snapshot(episode: Any) -> Trace:
    """A copy of the trace an abandoned agent thread may still be writing to."""
    lock = getattr(episode, "_lock", None)
    held = lock.acquire(timeout=1.0) if lock is not None else False
    try:
        return episode.trace.model_copy(deep=True)
    finally:
        if held:
            lock.release()


# --------------------------------------------------------------------------- traces file


def recover_traces(path: Path) -> list[Trace]:
    """Traces already written; a torn last line (a kill mid-write) is cut off the file.

    A second trace of the same question and trial is a located error,
    as in ``groundeval score``: a resumed run never holds an episode twice."""
    from ..trace.io import TraceKeys

    if not path.exists():
        return []
    data = path.read_bytes()
    traces: list[Trace] = []
    keys = TraceKeys(path)
    pos, line_no = 0, 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        line_no += 1
        chunk = data[pos:] if end < 0 else data[pos:end]
        try:
            if chunk.strip():
                trace = Trace.model_validate_json(chunk)
                keys.add(trace, line_no)
                traces.append(trace)
        except ValueError as exc:
            if end < 0 or data[end + 1 :].strip() == b"":
                with open(path, "r+b") as fh:  # the torn tail of a killed run
                    fh.truncate(pos)
                break
            raise ContractError.single(str(path), f"not a trace: {str(exc).splitlines()[0]}", line=line_no) from None
        if end < 0:  # a complete record without its newline: finish the line
            with open(path, "ab") as fh:
                fh.write(b"\n")
            break
        pos = end + 1
    return traces


def _append(path: Path, trace: Trace) -> None:
    from ..trace.io import append_trace

    append_trace(path, trace)


def check_writable(path: Path) -> None:
    from ..trace.io import check_writable as check

    check(path)


def _rewrite_in_order(path: Path, traces: list[Trace], order: list[str]) -> None:
    """Question order, atomically — so a finished run's file does not depend on thread timing."""
    from ..trace.io import trace_line

    rank = {qid: i for i, qid in enumerate(order)}
    traces = sorted(traces, key=lambda t: (rank.get(t.question_id, len(rank)), t.question_id, t.trial))
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for t in traces:
            line = trace_line(t)
            fh.write(line if line.endswith("\n") else line + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


# --------------------------------------------------------------------------- the run


def _questions(questions: QuestionSet | Iterable[Question]) -> list[Question]:
    items = questions.questions if isinstance(questions, QuestionSet) else list(questions)
    seen: set[str] = set()
    for q in items:
        if q.id in seen:
            raise ContractError.single("questions", f"question id {q.id!r} appears twice", record=q.id)
        seen.add(q.id)
    return items


def run_questions(
    store: Any,
    questions: QuestionSet | Iterable[Question],
    agent: Any,
    *,
    mode: str = "tool",
    out_dir: str | Path,
    concurrency: int = 1,
    resume: bool = False,
    timeout: float | None = None,
    max_steps: int = 30,
    overwrite: bool = False,
    pack: str | None = None,
    questions_source: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    trials: int = 1,
    execute: Callable[..., Trace] | None = None,
) -> Path:
    """Run ``agent`` on every question; returns the path of ``traces.jsonl`` in ``out_dir``.

    ``trials`` runs each question that many times (trial 0..K-1, one trace each; agents
    that take a seed read ``episode.seed``, the trial's seed). ``resume`` keeps the
    traces already there and runs only the missing (question, trial) episodes, with the
    trials the run recorded in ``run.json`` unless ``trials`` is larger;
    without it an existing traces file is an error unless ``overwrite``.
    ``on_progress(done, total)`` is called after each finished episode.
    Ctrl-C (KeyboardInterrupt) stops dispatching, records the run as interrupted and
    re-raises; what finished is kept. ``execute`` runs one episode in place of
    :func:`run_episode` (same arguments and result): :mod:`groundeval.distributed` passes one
    that runs it on a Ray worker, so the bookkeeping here is the same for every backend.
    """
    _check_settings(mode, concurrency, trials)
    items = _questions(questions)
    out = _output_folder(out_dir)
    traces_path, info_path = out / TRACES, out / RUN_INFO
    agent_name = getattr(agent, "name", type(agent).__name__)
    kept = _previous_traces(
        traces_path, resume=resume, overwrite=overwrite, digest=store.digest, mode=mode, agent_name=agent_name
    )
    saved = read_run_info(info_path) if resume else None
    trials = _resumed_trials(saved, trials)
    ids = {q.id for q in items}
    done_keys = {(t.question_id, t.trial) for t in kept if t.question_id in ids and t.trial < trials}
    todo = [(q, k) for q in items for k in range(trials) if (q.id, k) not in done_keys]
    book = _Bookkeeping(
        info_path,
        _run_info(
            saved,
            agent,
            mode,
            store.digest,
            pack,
            items,
            questions_source,
            concurrency=concurrency,
            timeout=timeout,
            max_steps=max_steps,
            trials=trials,
        ),
        skipped=len(done_keys),
        kept=[t for t in kept if (t.question_id, t.trial) in done_keys],
    )
    try:
        book.save("running")
        check_writable(traces_path)
    except OSError as exc:
        raise ContractError.single(str(out), f"cannot write the run's files: {exc.strerror or exc}") from None
    progress = _Progress(on_progress, len(items) * trials, len(done_keys))
    episode = execute or run_episode

    def run(question: Question, **kw: Any) -> Trace:
        return episode(store, question, agent, mode=mode, max_steps=max_steps, timeout=timeout, **kw)

    finished = _run_all(todo, run, trials, concurrency, traces_path, book, progress)
    _rewrite_in_order(traces_path, kept + finished, [q.id for q in items])
    book.finish(finished)
    return traces_path


def _check_settings(mode: str, concurrency: int, trials: int) -> None:
    if mode not in MODES:
        raise UsageError.single("--mode", f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if concurrency < 1:
        raise UsageError.single("--concurrency", "must be at least 1")
    if trials < 1:
        raise UsageError.single("--trials", "must be at least 1")


def _output_folder(out_dir: str | Path) -> Path:
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ContractError.single(str(out), f"cannot create the output folder: {exc.strerror or exc}") from None
    return out


def _previous_traces(
    traces_path: Path, *, resume: bool, overwrite: bool, digest: str, mode: str, agent_name: str
) -> list[Trace]:
    """The traces a resumed run keeps (each checked to belong to this run); without
    ``resume`` an existing file is an error unless ``overwrite`` (then it is removed)."""
    if traces_path.exists() and not resume:
        if not overwrite:
            raise ContractError.single(
                str(traces_path), "already exists; pass --resume to continue that run or choose another --out"
            )
        traces_path.unlink()
    if not resume:
        return []
    kept = recover_traces(traces_path)
    for t in kept:
        if t.contract_digest != digest:
            raise ContractError.single(
                str(traces_path),
                f"was recorded on another contract (digest {t.contract_digest[:12]} ≠ {digest[:12]}); cannot resume it",
                record=t.question_id,
            )
        if t.mode != mode:
            raise ContractError.single(
                str(traces_path), f"was recorded in {t.mode!r} mode, not {mode!r}", record=t.question_id
            )
        if t.agent != agent_name:
            raise ContractError.single(
                str(traces_path),
                f"was recorded with agent {t.agent!r}, not {agent_name!r}; resume with the same agent",
                record=t.question_id,
            )
    return kept


def _resumed_trials(saved: RunInfo | None, trials: int) -> int:
    """A resumed run keeps its trials (a larger ``trials`` extends it)."""
    recorded = (saved.settings or {}).get("trials") if saved is not None else None
    return recorded if isinstance(recorded, int) and recorded > trials else trials


def _run_info(
    saved: RunInfo | None,
    agent: Any,
    mode: str,
    digest: str,
    pack: str | None,
    items: list[Question],
    questions_source: str | None,
    *,
    concurrency: int,
    timeout: float | None,
    max_steps: int,
    trials: int,
) -> RunInfo:
    """``run.json`` for this session: the saved one (resume) brought up to date, or a new one."""
    info = saved or RunInfo(agent=describe(agent), mode=mode, contract_digest=digest)
    info.agent, info.mode, info.contract_digest, info.pack = describe(agent), mode, digest, pack or info.pack
    info.settings = {"concurrency": concurrency, "timeout_s": timeout, "max_steps": max_steps}
    if trials > 1:
        info.settings["trials"] = trials
    info.questions = {"source": questions_source, "count": len(items)}
    info.versions, info.status, info.episodes_total = versions(), "running", len(items) * trials
    return info


class _Bookkeeping:
    """``run.json`` as the run goes: this session, the trace statuses counted, the end state."""

    def __init__(self, path: Path, info: RunInfo, *, skipped: int, kept: list[Trace]):
        self.path, self.info = path, info
        self.session = Session(started=now(), skipped=skipped)
        info.sessions.append(self.session)
        self.kept = kept  # the earlier sessions' traces this run counts
        self.by_status: dict[str, int] = {}
        for t in kept:
            self.by_status[t.status] = self.by_status.get(t.status, 0) + 1
        self.clock = time.monotonic()

    def count(self, trace: Trace) -> None:
        self.by_status[trace.status] = self.by_status.get(trace.status, 0) + 1
        self.session.episodes += 1

    def save(self, status: str, message: str | None = None) -> None:
        session, info = self.session, self.info
        session.status, session.message = status, message
        session.ended = now()
        session.wall_clock_s = round(time.monotonic() - self.clock, 3)
        info.status = status
        info.episodes_done = sum(self.by_status.values())
        info.by_status = dict(sorted(self.by_status.items()))
        info.wall_clock_s = round(sum(s.wall_clock_s or 0.0 for s in info.sessions), 3)
        write_run_info(self.path, info)

    def finish(self, finished: list[Trace]) -> None:
        """The end state: failed when every episode errored (nothing was measured), else completed."""
        mine = self.kept + finished
        errored = [t for t in mine if t.status in ERRORED_STATUSES]
        if mine and len(errored) == len(mine):
            self.save("failed", f"every episode errored ({len(errored)} of {len(mine)}); first: {first_error(errored)}")
        else:
            self.save(
                "completed",
                f"{len(errored)} of {len(mine)} episodes errored; first: {first_error(errored)}" if errored else None,
            )


class _Progress:
    def __init__(self, callback: Callable[[int, int], None] | None, total: int, done: int):
        self.callback, self.total, self.done = callback, total, done
        self.tick(0)

    def tick(self, n: int = 1) -> None:
        self.done += n
        if self.callback:
            self.callback(self.done, self.total)


def _start_workers(
    todo: list[tuple[Question, int]],
    run: Callable[..., Trace],
    trials: int,
    concurrency: int,
    results: queue.Queue,
    stop: threading.Event,
) -> list[threading.Thread]:
    """Threads taking (question, trial) episodes off a queue until it is empty or ``stop`` is set;
    each finished trace (or a fatal error) is put on ``results``."""
    work: queue.Queue = queue.Queue()
    for q, k in todo:
        work.put((q, k))

    def worker() -> None:
        while not stop.is_set():
            try:
                q, k = work.get_nowait()
            except queue.Empty:
                return
            try:
                results.put(("ok", run(q, stop=stop, trial=k, seed=trial_seed(k, trials))))
            except EpisodeStopped:
                return
            except BaseException as exc:  # noqa: BLE001 - a fatal provider error or an internal bug
                results.put(("fatal", exc))
                return

    threads = [
        threading.Thread(target=worker, name=f"groundeval-run-{i}", daemon=True)
        for i in range(min(concurrency, len(todo)))
    ]
    for t in threads:
        t.start()
    return threads


def _run_all(
    todo: list[tuple[Question, int]],
    run: Callable[..., Trace],
    trials: int,
    concurrency: int,
    traces_path: Path,
    book: _Bookkeeping,
    progress: _Progress,
) -> list[Trace]:
    """Run every episode of ``todo``; each finished trace is appended (and counted) by this
    thread as it arrives. Ctrl-C records the run as interrupted and re-raises."""
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    threads = _start_workers(todo, run, trials, concurrency, results, stop)
    finished: list[Trace] = []
    interrupted = _DeferredInterrupt()
    try:
        for trace in _arrivals(results, threads, len(todo), interrupted):
            if isinstance(trace, BaseException):
                stop.set()
                _abort(book, trace)
            _keep(traces_path, trace, book, stop)
            finished.append(trace)
            progress.tick()
    except KeyboardInterrupt:
        stop.set()
        book.save("interrupted", "stopped by the user; finished episodes kept — rerun with --resume")
        _join(threads, STOP_WAIT_S)  # episodes in flight stop at their next tool call
        raise
    finally:
        interrupted.restore()
    _join(threads, 1.0)
    return finished


def _arrivals(
    results: queue.Queue, threads: list[threading.Thread], pending: int, interrupted: _DeferredInterrupt
) -> Iterator[Trace | BaseException]:
    """Finished traces (or a worker's fatal error) as they arrive, until ``pending`` came or the workers are gone."""
    while pending:
        interrupted.check()  # Ctrl-C lands here, between whole episodes: never mid-bookkeeping
        try:
            kind, value = results.get(timeout=0.2)
        except queue.Empty:
            if not any(t.is_alive() for t in threads) and results.empty():
                return
            continue
        if kind == "ok":
            pending -= 1
        yield value


def _abort(book: _Bookkeeping, error: BaseException) -> NoReturn:
    """A worker's fatal error stops the run: recorded as aborted, then raised (a provider's as a usage error)."""
    book.save("aborted", escape(str(error)))
    if isinstance(error, ProviderError):
        raise UsageError.single("--agent", f"the run stopped: {error}") from None
    raise error


def _keep(traces_path: Path, trace: Trace, book: _Bookkeeping, stop: threading.Event) -> None:
    """Append one finished trace and count it; a trace that cannot be written stops the run, loudly."""
    try:
        _append(traces_path, trace)
    except OSError as exc:  # never drop a finished episode silently: stop and say so
        stop.set()
        message = (
            f"cannot write the trace of question {trace.question_id!r}: {exc.strerror or exc}; "
            "the run stopped — earlier episodes are kept, rerun with --resume once it is writable"
        )
        try:
            book.save("aborted", message)
        except OSError:
            pass
        raise ContractError.single(str(traces_path), message) from None
    book.count(trace)


def first_error(traces: list[Trace]) -> str:
    """The runner's note on the first errored trace (question order), for the console."""
    for t in traces:
        for m in reversed(t.messages):
            if isinstance(m, dict) and m.get("role") == "runner" and m.get("error"):
                return str(m["error"])
        if t.status == "timeout":
            return "episode timed out"
    return "unknown error"


class _DeferredInterrupt:
    """While a run collects episodes, SIGINT only sets a flag that :meth:`check` turns into
    KeyboardInterrupt at a safe point, so a trace is never written without being counted.
    Only the main thread can install signal handlers; elsewhere Ctrl-C is Python's default."""

    def __init__(self) -> None:
        self.hit = False
        self._old = None
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum, frame) -> None:
        self.hit = True

    def check(self) -> None:
        if self.hit:
            self.hit = False
            raise KeyboardInterrupt

    def restore(self) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None


def _join(threads: list[threading.Thread], seconds: float) -> None:
    end = time.monotonic() + seconds
    for t in threads:
        t.join(timeout=max(0.0, end - time.monotonic()))
