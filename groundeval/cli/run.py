"""``groundeval run`` and ``groundeval eval``: thin wrappers over :mod:`groundeval.api`."""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager
from typing import Iterator

import click

from ..agents.base import MODES
from ..errors import UsageError
from .options import PACK, NumberRange, backend_options, force_option, llm_options, make_backend, warn_forced


def _subset(tracks, buckets, question_ids, limit):
    """The questions selected by --track / --bucket / --question-id / --limit (None: all)."""
    from ..questions.subset import Subset

    subset = Subset(tuple(tracks), tuple(buckets), tuple(question_ids), limit)
    return subset if subset else None


def agent_options(f):
    """Options shared by both commands (the LLM ones are ignored by built-in agents)."""
    for opt in reversed(
        [
            click.option(
                "--agent",
                "-a",
                "agents",
                multiple=True,
                help="oracle | leaky | lazy | keyword | openai:<model> | anthropic:<model> | module:factory. "
                "Repeat it to run several agents on the same questions: one folder each under OUT, and a "
                "comparison (OUT/comparison.json/.md/.html).",
            ),
            click.option("--mode", type=click.Choice(MODES), default="tool", show_default=True),
            click.option(
                "--concurrency",
                "-j",
                type=click.IntRange(1),
                default=1,
                show_default=True,
                help="Episodes run at once (threads).",
            ),
            click.option(
                "--timeout",
                type=NumberRange(min=0, min_open=True),
                default=None,
                help="Per-episode timeout in seconds.",
            ),
            click.option(
                "--max-steps",
                type=click.IntRange(1),
                default=30,
                show_default=True,
                help="Tool-call budget per episode.",
            ),
            click.option("--seed", type=int, default=None, help="Question generation seed (default: the pack's)."),
            click.option("--resume", is_flag=True, help="Keep finished episodes in OUT and run only the rest."),
            click.option(
                "--trials",
                type=click.IntRange(1),
                default=1,
                show_default=True,
                help="Run every question this many times (one trace per trial; agents that take a seed get "
                "the trial's). Reports add pass@k and pass^k.",
            ),
            click.option("--base-url", default=None, help="LLM adapters: the server's base URL."),
            click.option("--api-key-env", default=None, help="LLM adapters: environment variable holding the key."),
            click.option("--temperature", type=NumberRange(), default=None, help="LLM adapters: sampling temperature."),
            click.option("--max-tokens", type=int, default=None, help="LLM adapters: tokens per completion."),
            click.option("--retries", type=click.IntRange(0), default=None, help="LLM adapters: retries per request."),
            click.option(
                "--request-timeout", type=NumberRange(), default=None, help="LLM adapters: seconds per request."
            ),
            click.option(
                "--cache",
                "response_cache",
                type=click.Path(file_okay=False),
                default=None,
                help="LLM adapters: keep every response in this folder by request digest and answer a repeated "
                "request from it (no network call): a replay gives the same traces.",
            ),
            click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
            click.option(
                "--track",
                "tracks",
                multiple=True,
                help="Run only this track's questions (repeatable).",
            ),
            click.option(
                "--bucket",
                "buckets",
                multiple=True,
                help="Run only this bucket's questions, e.g. absence (repeatable).",
            ),
            click.option(
                "--question-id",
                "question_ids",
                multiple=True,
                help="Run only the questions whose id matches this shell pattern, e.g. 'q_0a*' (repeatable).",
            ),
            click.option(
                "--limit",
                type=click.IntRange(1),
                default=None,
                help="Run only the first N selected questions, in the question set's order.",
            ),
        ]
    ):
        f = opt(f)
    return f


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops a run like Ctrl-C does: finished episodes kept, run.json says so."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _progress(quiet: bool, label: str):
    """A rich progress bar; yields an ``on_progress(done, total)`` callback."""
    if quiet:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
        disable=not console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _interrupted(out: str) -> None:
    """Report and leave at once: an LLM request still in flight in a worker thread must not
    hold the process (or crash interpreter shutdown inside a native call)."""
    click.echo(
        f"interrupted: finished episodes are kept in {out}/traces.jsonl; rerun with --resume to complete the run",
        err=True,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


@click.command()
@click.argument("source", type=PACK)
@agent_options
@force_option
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option(
    "--questions",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Questions file to run (default: generate them from the pack).",
)
@click.option(
    "--pack", type=PACK, default=None, help="The pack, when SOURCE is a questions file that does not locate it."
)
@click.option("--overwrite", is_flag=True, help="Replace an existing traces.jsonl in OUT.")
@backend_options()
def run(source, agents, out, **o):
    """Run an agent over SOURCE (a pack or a questions file), appending OUT/traces.jsonl.

    Each finished episode is written at once; a killed or interrupted run keeps them and
    --resume runs only the rest. Run metadata goes to OUT/run.json. With --backend ray the
    episodes run on Ray workers (docs/ray.md); the traces are the same. A world (a folder with
    world.yaml, docs/worlds.md) runs its tasks as multi-turn episodes. Several --agent: each
    runs in OUT/<agent>/."""
    from .worlds import is_world_source, run_world_from_options

    folders = agent_folders(_required(agents))
    if is_world_source(source):
        return run_world_from_options(source, _one(agents), out, o)
    from pathlib import Path

    from .. import api

    opts = llm_options(o)
    code = 0
    for agent in agents:
        agent_out = str(Path(out) / folders[agent]) if len(agents) > 1 else out
        code = max(code, _run_one(api, source, agent, agent_out, opts, o))
    if code:
        sys.exit(code)


def _run_one(api, source, agent, out, opts, o) -> int:
    """One agent's ``run`` into ``out``: the exit code its run deserves (printed reasons)."""
    be = make_backend(o["backend"], o["ray_address"], o["workers"], o["ray_runtime_env"])
    mode, concurrency, resume, overwrite = o["mode"], o["concurrency"], o["resume"], o["overwrite"]
    timeout, max_steps, questions, pack, seed = o["timeout"], o["max_steps"], o["questions"], o["pack"], o["seed"]
    force, trials, db = o["force"], o["trials"], o["db"]
    subset = _subset(o["tracks"], o["buckets"], o["question_ids"], o["limit"])
    try:
        with _sigterm_as_interrupt(), _progress(o["quiet"], f"run {agent}") as on_progress:
            path = api.run(
                source,
                agent,
                out,
                mode=mode,
                concurrency=concurrency,
                resume=resume,
                overwrite=overwrite,
                timeout=timeout,
                max_steps=max_steps,
                questions=questions,
                pack=pack,
                seed=seed,
                agent_options=opts,
                on_progress=on_progress,
                force=force,
                on_forced=warn_forced,
                trials=trials,
                backend=be,
                db=db,
                subset=subset,
            )
    except KeyboardInterrupt:
        _interrupted(out)
    finally:
        be.close()
    from ..agents.runinfo import read_run_info

    info = read_run_info(path.parent / "run.json")
    if info is not None:
        counts = ", ".join(f"{k} {v}" for k, v in info.by_status.items())
        click.echo(
            f"{info.episodes_done}/{info.episodes_total} episodes ({counts}) in {info.wall_clock_s:.2f}s → {path}"
        )
    return run_exit_code(path.parent, counts=_voided(path))


def _voided(traces_path) -> tuple[int, int, int]:
    """(episodes, errored, empty) of a run's traces, by the scorer's own rule (``void_reason``)."""
    from ..scoring.score import EMPTY, ERRORED, retrieval_count, void_reason
    from ..trace.io import iter_trace_lines, parse_trace
    from ..trace.model import decode_trace

    n = errored = empty = 0
    for number, line in iter_trace_lines(traces_path):
        t = decode_trace(line) or parse_trace(traces_path, number, line)
        reason = void_reason(t.status, t.mode, retrieval_count(t.calls), isinstance(t.final_answer, dict))
        n += 1
        errored += reason == ERRORED
        empty += reason == EMPTY
    return n, errored, empty


def agent_folders(agents) -> dict[str, str]:
    """Each --agent's folder name (file-system safe); the same agent twice, or two agents whose
    names map to one folder, is a usage error."""
    folders: dict[str, str] = {}
    for agent in agents:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in agent)
        if agent in folders or safe in folders.values():
            raise UsageError.single("--agent", f"{agent!r} given twice (or two agents named alike: {safe})")
        folders[agent] = safe
    return folders


def _required(agents):
    if not agents:
        raise UsageError.single("--agent", "is required (repeat it for several agents)")
    return agents


def _one(agents) -> str:
    if len(agents) > 1:
        raise UsageError.single("--agent", "a world runs one agent at a time")
    return agents[0]


def exit_for_run(out, report=None) -> None:
    """Exit with :func:`run_exit_code` when it is not 0."""
    code = run_exit_code(out, report=report)
    if code:
        sys.exit(code)  # not click's Exit: the entry point runs click non-standalone and would drop the code


def run_exit_code(out, report=None, counts: tuple[int, int, int] | None = None) -> int:
    """The exit code tells the truth about the run (docs/cli.md, "Exit codes"): every episode
    errored → ``failed``, 1; some errored → a warning naming the first cause, 0. With the run's
    ``report`` (eval) or ``counts`` (run: episodes, errored, empty from its traces), empty
    episodes (no search or fetch, no answer) are told the same way: a run where no episode measured
    anything (each errored or empty) is 1. Reasons go to stderr."""
    from pathlib import Path

    from ..agents.runinfo import errored_count, read_run_info

    traces = Path(out) / "traces.jsonl"
    info = read_run_info(Path(out) / "run.json")
    message = info.sessions[-1].message if info is not None and info.sessions else None
    if info is not None and info.status == "failed":
        click.echo(f"error: the run failed: {message}; see {traces}", err=True)
        return 1
    if info is not None and errored_count(info.by_status):
        click.echo(f"warning: {message}; those questions score 0 (see {traces})", err=True)
    if report is not None:
        counts = (report.overall.n, report.errored_episodes, report.empty_episodes)
    if counts is None or not counts[2]:
        return 0
    n, errored, empty = counts
    if empty + errored >= n:
        click.echo(
            f"error: nothing was measured: {empty} of {n} episodes are empty (no search or fetch and no answer)"
            + (f" and {errored} errored" if errored else "")
            + f"; see {traces}",
            err=True,
        )
        return 1
    click.echo(
        f"warning: {empty} of {n} episodes are empty (no search or fetch and no answer); they score 0 (see {traces})",
        err=True,
    )
    return 0


@click.command("eval")
@click.argument("pack", type=PACK, required=False)
@agent_options
@force_option
@click.option(
    "--out",
    "-o",
    default=None,
    type=click.Path(file_okay=False),
    help="Output folder (default: out/<pack name>-<agent>, or out/<pack name>-compare for several agents).",
)
@click.option("--level", type=click.IntRange(1, 4), default=4, show_default=True, help="Verifier level.")
@click.option(
    "--profile",
    type=click.Choice(["default", "paper"]),
    default="default",
    show_default=True,
    help="Scoring formulas: groundeval's own (default) or the original release's (paper).",
)
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Without PACK: the eval file (default: ./groundeval.toml, else [tool.groundeval] in ./pyproject.toml).",
)
@backend_options()
def eval_(pack, agents, out, config, **o):
    """The main job: verify PACK, generate questions, run the agent, score and report — all in OUT.
    Several --agent: each in OUT/<agent>/ on the same questions, then a comparison table and
    OUT/comparison.json/.md/.html. Without PACK: the eval file (groundeval.toml or
    [tool.groundeval], docs/cli.md). For a world (docs/worlds.md): run every task, judge each
    episode, report."""
    from pathlib import Path

    from .worlds import is_world_source, run_world_from_options

    if pack is None:
        return eval_from_file(config, agents, out, o)
    if config is not None:
        raise UsageError.single("--config", "is read only when no PACK is given")
    folders = agent_folders(_required(agents))
    if is_world_source(pack):
        return run_world_from_options(pack, _one(agents), out, o)
    if out is None:
        name = folders[agents[0]] if len(agents) == 1 else "compare"
        out = str(Path("out") / f"{Path(pack).resolve().name}-{name}")
    if len(agents) == 1:
        result = _eval_one(pack, agents[0], out, o)
        click.echo(headline(result))
        exit_for_run(result.out_dir, result.report)
        return
    runs, code = [], 0
    for agent in agents:
        if not o["quiet"]:
            click.echo(f"· agent {agent}", err=True)
        result = _eval_one(pack, agent, str(Path(out) / folders[agent]), o)
        runs.append((agent, result))
        code = max(code, run_exit_code(result.out_dir, report=result.report))
    from ..report.agents import AgentRun, compare_agents, write_comparison

    data = compare_agents([AgentRun(a, folders[a], r.report, r.scores) for a, r in runs])
    paths = write_comparison(data, Path(out))
    click.echo(comparison_table(data) + f"\n\ncomparison: {paths['comparison.html']} · {paths['comparison.md']}")
    if code:
        sys.exit(code)


def eval_from_file(config, agents, out, o) -> None:
    """``groundeval eval`` without PACK: every pack of the eval file with every agent (the file's,
    or --agent), each pack's agents compared, then the file's thresholds checked per pack and
    agent as ``gate`` checks them; exit 1 when a run failed or a check broke."""
    from pathlib import Path

    from ..agents.runinfo import read_run_info
    from ..report.agents import AgentRun, compare_agents, write_comparison
    from ..report.gate import gate_checks, integrity_checks
    from . import evalfile

    path = Path(config) if config else evalfile.find(Path.cwd())
    if path is None:
        raise UsageError.single(
            "PACK", f"give a pack, or write an eval file ({evalfile.FILE} or [tool.groundeval] in pyproject.toml)"
        )
    spec = evalfile.load(path)
    ctx = click.get_current_context()
    for key, value in spec.run.items():  # the file's settings, unless given on the command line
        if ctx.get_parameter_source(key) != click.core.ParameterSource.COMMANDLINE:
            o[key] = value
    agents = agents or spec.agents
    folders = agent_folders(agents)
    root = Path(out or spec.out or "out/groundeval")
    click.echo(f"eval file: {path} ({len(spec.packs)} packs x {len(agents)} agents) → {root}", err=True)
    code, failed = 0, []
    for pack in spec.packs:
        pack_dir = root / Path(pack).name
        runs = []
        for agent in agents:
            if not o["quiet"]:
                click.echo(f"· {pack} · agent {agent}", err=True)
            result = _eval_one(pack, agent, str(pack_dir / folders[agent]), o)
            runs.append((agent, result))
            code = max(code, run_exit_code(result.out_dir, report=result.report))
        data = compare_agents([AgentRun(a, folders[a], r.report, r.scores) for a, r in runs])
        write_comparison(data, pack_dir)
        click.echo(f"{pack}\n" + comparison_table(data))
        for agent, result in runs:
            info = read_run_info(result.out_dir / "run.json")
            checks = integrity_checks(
                result.report,
                run_status=None if info is None else info.status,
                allow_errors=spec.allow_errors,
                allow_empty=spec.allow_empty,
            )
            checks += gate_checks(
                result.report,
                min_adjusted=spec.min_adjusted,
                max_violation_rate=spec.max_violation_rate,
                allow_empty=spec.allow_empty,
            )
            checks += _track_checks(result.report, spec.min_adjusted_by_track)
            for c in checks:
                click.echo(f"{'PASS' if c.passed else 'FAIL'}  {Path(pack).name} · {agent} · {c.name}: {c.message}")
            failed += [c for c in checks if not c.passed]
    if failed:
        click.echo(f"eval file: {len(failed)} checks broke", err=True)
    if failed or code:
        sys.exit(max(code, 1))


def _track_checks(report, thresholds: dict[str, float]) -> list:
    from ..report.gate import Check

    checks = []
    for track, minimum in sorted(thresholds.items()):
        g = report.tracks.get(track)
        if g is None:
            checks.append(Check(f"{track}.min_adjusted", False, f"the run has no {track} question"))
            continue
        ok = g.run_s_adj >= minimum - 1e-12
        checks.append(
            Check(
                f"{track}.min_adjusted",
                ok,
                f"{track} run S_adj {g.run_s_adj:.4f} {'>=' if ok else '<'} minimum {minimum:.4f}",
            )
        )
    return checks


def _eval_one(pack, agent, out, o):
    """``api.evaluate`` of one agent into ``out`` with the command's options."""
    from .. import api

    opts = llm_options(o)
    stages = (lambda s: None) if o["quiet"] else (lambda s: click.echo(f"· {s}", err=True))
    be = make_backend(o["backend"], o["ray_address"], o["workers"], o["ray_runtime_env"])
    try:
        with _sigterm_as_interrupt(), _progress(o["quiet"], f"run {agent}") as on_progress:
            return api.evaluate(
                pack,
                agent,
                out,
                mode=o["mode"],
                concurrency=o["concurrency"],
                timeout=o["timeout"],
                max_steps=o["max_steps"],
                seed=o["seed"],
                level=o["level"],
                resume=o["resume"],
                agent_options=opts,
                on_progress=on_progress,
                on_stage=stages,
                force=o["force"],
                on_forced=warn_forced,
                trials=o["trials"],
                profile=o["profile"],
                backend=be,
                db=o["db"],
                subset=_subset(o["tracks"], o["buckets"], o["question_ids"], o["limit"]),
            )
    except KeyboardInterrupt:
        _interrupted(out)
    finally:
        be.close()


def comparison_table(data) -> str:
    """The agents side by side (``groundeval.report.agents``), as the console shows them."""
    import io

    from rich.console import Console
    from rich.table import Table

    from ..report.agents import table_rows

    header, rows = table_rows(data)
    table = Table(show_edge=False, title="agents compared")
    for i, col in enumerate(header):
        table.add_column(col, justify="left" if i == 0 or col == "compliance" else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    buf = io.StringIO()
    Console(file=buf, width=160, color_system=None).print(table)
    return buf.getvalue().rstrip()


def headline(result) -> str:
    """A short table from the run report: per track the mean of the questions' S_adj and the run
    S_adj (mean combined score x (1 - run v)^2, the figure ``gate`` checks), accuracy, valid
    answers, v and the compliance tier."""
    import io

    from rich.console import Console
    from rich.table import Table

    report = result.report
    table = Table(show_edge=False, title=f"{report.agent or '?'} · {report.mode or '?'} mode")
    n_label = "traces" if report.trials is not None else "questions"  # with trials, every trial counts
    for col in (
        "track",
        n_label,
        "mean S_adj",
        "run S_adj",
        "accuracy",
        "valid answers",
        "violation rate",
        "compliance",
    ):
        table.add_column(col, justify="left" if col in ("track", "compliance") else "right", no_wrap=True)
    rows = [*report.tracks.items(), ("all", report.overall)]
    for name, g in rows:
        s_adj = g.means.get("s_adj")
        table.add_row(
            name,
            str(g.n),
            "-" if s_adj is None else f"{s_adj:.3f}",
            f"{g.run_s_adj:.3f}",
            f"{g.accuracy:.3f}",
            f"{g.valid_answer_rate:.3f}",
            f"{g.run_violation_rate:.3f}",
            g.compliance_tier,
        )
    buf = io.StringIO()
    Console(file=buf, width=120, color_system=None).print(table)
    extra = ""
    if report.profile != "default":
        extra += f"\nscoring profile: {report.profile} (not groundeval's default formulas)"
    if report.trials is not None:
        from .scoring import trials_line

        extra += "\n" + trials_line(report)
    return (
        buf.getvalue().rstrip()
        + extra
        + f"\n\nreports: {result.out_dir / 'report.html'} · {result.out_dir / 'report.md'}"
    )
