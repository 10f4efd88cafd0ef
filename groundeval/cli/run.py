"""``groundeval run`` and ``groundeval eval``: thin wrappers over :mod:`groundeval.api`."""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager
from typing import Any, Iterator

import click

from ..agents.base import MODES
from .options import PACK, backend_options, force_option, make_backend, warn_forced


def _subset(tracks, buckets, question_ids, limit):
    """The questions selected by --track / --bucket / --question-id / --limit (None: all)."""
    from ..questions.subset import Subset

    subset = Subset(tuple(tracks), tuple(buckets), tuple(question_ids), limit)
    return subset if subset else None


def _agent_options(base_url, api_key_env, temperature, max_tokens, retries, request_timeout) -> dict[str, Any]:
    return {
        "base_url": base_url,
        "api_key_env": api_key_env,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "retries": retries,
        "timeout": request_timeout,
    }


def agent_options(f):
    """Options shared by both commands (the LLM ones are ignored by built-in agents)."""
    for opt in reversed(
        [
            click.option(
                "--agent",
                "-a",
                required=True,
                help="oracle | leaky | lazy | keyword | openai:<model> | anthropic:<model> | module:factory",
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
                type=click.FloatRange(min=0, min_open=True),
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
            click.option("--temperature", type=float, default=None, help="LLM adapters: sampling temperature."),
            click.option("--max-tokens", type=int, default=None, help="LLM adapters: tokens per completion."),
            click.option("--retries", type=click.IntRange(0), default=None, help="LLM adapters: retries per request."),
            click.option("--request-timeout", type=float, default=None, help="LLM adapters: seconds per request."),
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
def run(
    source,
    agent,
    mode,
    concurrency,
    timeout,
    max_steps,
    seed,
    resume,
    trials,
    base_url,
    api_key_env,
    temperature,
    max_tokens,
    retries,
    request_timeout,
    quiet,
    tracks,
    buckets,
    question_ids,
    limit,
    force,
    out,
    questions,
    pack,
    overwrite,
    backend,
    ray_address,
    workers,
    ray_runtime_env,
    db,
):
    """Run an agent over SOURCE (a pack or a questions file), appending OUT/traces.jsonl.

    Each finished episode is written at once; a killed or interrupted run keeps them and
    --resume runs only the rest. Run metadata goes to OUT/run.json. With --backend ray the
    episodes run on Ray workers (docs/ray.md); the traces are the same. A world (a folder with
    world.yaml, docs/worlds.md) runs its tasks as multi-turn episodes."""
    from .worlds import is_world_source, run_world_command

    if is_world_source(source):
        return run_world_command(
            source, agent, out, trials=trials, concurrency=concurrency, resume=resume, overwrite=overwrite
        )
    from .. import api

    opts = _agent_options(base_url, api_key_env, temperature, max_tokens, retries, request_timeout)
    be = make_backend(backend, ray_address, workers, ray_runtime_env)
    try:
        with _sigterm_as_interrupt(), _progress(quiet, f"run {agent}") as on_progress:
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
                subset=_subset(tracks, buckets, question_ids, limit),
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
    exit_for_run(path.parent)


def exit_for_run(out, report=None) -> None:
    """The exit code tells the truth about the run (docs/cli.md, "Exit codes"): every episode
    errored → ``failed``, exit 1; some errored → a warning naming the first cause, exit 0. With
    the run's ``report`` (eval), empty episodes (no tool call, no answer) are told the same way:
    a run where no episode measured anything (each errored or empty) exits 1."""
    from pathlib import Path

    from ..agents.runinfo import errored_count, read_run_info

    traces = Path(out) / "traces.jsonl"
    info = read_run_info(Path(out) / "run.json")
    message = info.sessions[-1].message if info is not None and info.sessions else None
    if info is not None and info.status == "failed":
        click.echo(f"error: the run failed: {message}; see {traces}", err=True)
        sys.exit(1)
    if info is not None and errored_count(info.by_status):
        click.echo(f"warning: {message}; those questions score 0 (see {traces})", err=True)
    if report is None or not report.empty_episodes:
        return
    n, empty = report.overall.n, report.empty_episodes
    if empty + report.errored_episodes >= n:
        click.echo(
            f"error: nothing was measured: {empty} of {n} episodes are empty (no tool call and no answer)"
            + (f" and {report.errored_episodes} errored" if report.errored_episodes else "")
            + f"; see {traces}",
            err=True,
        )
        sys.exit(1)
    click.echo(
        f"warning: {empty} of {n} episodes are empty (no tool call and no answer); they score 0 (see {traces})",
        err=True,
    )


@click.command("eval")
@click.argument("pack", type=PACK)
@agent_options
@force_option
@click.option(
    "--out",
    "-o",
    default=None,
    type=click.Path(file_okay=False),
    help="Output folder (default: out/<pack name>-<agent>).",
)
@click.option("--level", type=click.IntRange(1, 4), default=4, show_default=True, help="Verifier level.")
@click.option(
    "--profile",
    type=click.Choice(["default", "paper"]),
    default="default",
    show_default=True,
    help="Scoring formulas: groundeval's own (default) or the original release's (paper).",
)
@backend_options()
def eval_(
    pack,
    agent,
    mode,
    concurrency,
    timeout,
    max_steps,
    seed,
    resume,
    trials,
    base_url,
    api_key_env,
    temperature,
    max_tokens,
    retries,
    request_timeout,
    quiet,
    tracks,
    buckets,
    question_ids,
    limit,
    force,
    out,
    level,
    profile,
    backend,
    ray_address,
    workers,
    ray_runtime_env,
    db,
):
    """The main job: verify PACK, generate questions, run the agent, score and report — all in OUT.
    For a world (docs/worlds.md): run every task, judge each episode, report."""
    from pathlib import Path

    from .worlds import is_world_source, run_world_command

    if is_world_source(pack):
        return run_world_command(pack, agent, out, trials=trials, concurrency=concurrency, resume=resume)

    from .. import api

    if out is None:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in agent)
        out = str(Path("out") / f"{Path(pack).resolve().name}-{safe}")
    opts = _agent_options(base_url, api_key_env, temperature, max_tokens, retries, request_timeout)
    stages = (lambda s: None) if quiet else (lambda s: click.echo(f"· {s}", err=True))
    be = make_backend(backend, ray_address, workers, ray_runtime_env)
    try:
        with _sigterm_as_interrupt(), _progress(quiet, f"run {agent}") as on_progress:
            result = api.evaluate(
                pack,
                agent,
                out,
                mode=mode,
                concurrency=concurrency,
                timeout=timeout,
                max_steps=max_steps,
                seed=seed,
                level=level,
                resume=resume,
                agent_options=opts,
                on_progress=on_progress,
                on_stage=stages,
                force=force,
                on_forced=warn_forced,
                trials=trials,
                profile=profile,
                backend=be,
                db=db,
                subset=_subset(tracks, buckets, question_ids, limit),
            )
    except KeyboardInterrupt:
        _interrupted(out)
    finally:
        be.close()
    click.echo(headline(result))
    exit_for_run(result.out_dir, result.report)


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
