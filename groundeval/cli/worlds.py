"""World commands: ``groundeval run/eval WORLD`` dispatch here (a folder with ``world.yaml`` or a
bundled world's name), and ``groundeval worlds`` groups the world-only ones (``score``,
``list``). See docs/worlds.md."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .runtime import http_options, network_settings

from .options import NumberRange, backend_options, llm_options, make_backend


def is_world_source(source: str | Path) -> bool:
    from ..worlds.load import is_world

    return is_world(source)


# ``run``/``eval`` options that mean something for a pack's questions only: given with a world
# they are refused (a silently ignored --track would misreport the run). --backend ray and its
# options run a world's episodes on Ray workers (docs/ray.md).
_PACK_ONLY = frozenset(
    ("mode", "timeout", "max_steps", "seed", "tracks", "buckets", "questions", "pack", "force", "db")
)  # fmt: skip


def world_options(o: dict) -> tuple[dict, dict]:
    """From ``run``/``eval``'s options: the world agent's options and the task selection
    (``--question-id`` patterns match task ids, ``--limit`` keeps the first N); a usage error
    names every given option a world does not take."""
    ctx = click.get_current_context()
    given = [
        p.opts[0]
        for p in ctx.command.params
        if isinstance(p, click.Option)
        and p.name in _PACK_ONLY
        and ctx.get_parameter_source(p.name) not in (None, click.core.ParameterSource.DEFAULT)
    ]
    if given:
        verb = "is not an option" if len(given) == 1 else "are not options"
        raise click.UsageError(f"{', '.join(given)} {verb} of a world run (docs/worlds.md lists a world's options)")
    return llm_options(o), {"patterns": list(o.get("question_ids") or ()), "limit": o.get("limit")}


def run_world_from_options(source, agent: str, out: str | None, o: dict) -> None:
    """``run``/``eval`` given a world: their options checked and passed (:func:`world_options`)."""
    agent_opts, select = world_options(o)
    be = make_backend(o["backend"], o["ray_address"], o["workers"], o["ray_runtime_env"])
    try:
        run_world_command(
            source,
            agent,
            out,
            trials=o["trials"],
            concurrency=o["concurrency"],
            resume=o["resume"],
            overwrite=o.get("overwrite", False),
            agent_options=agent_opts,
            select=select,
            backend=be,
        )
    finally:
        be.close()


def run_world_command(
    source,
    agent: str,
    out: str | None,
    *,
    trials: int = 1,
    concurrency: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    quiet: bool = False,
    simulator=None,
    agent_options: dict | None = None,
    select: dict | None = None,
    backend=None,
) -> None:
    """What ``run``/``eval`` do with a world: episodes, traces, verdicts, reports; a headline.
    ``select``: ``patterns`` (shell patterns of task ids) and ``limit`` (the first N tasks)."""
    from ..worlds.run import run_world

    task_ids = _selected_tasks(source, select) if select else None
    if out is None:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in agent)
        out = str(Path("out") / f"{Path(source).resolve().name}-{safe}")
    result = run_world(
        source,
        agent,
        out,
        trials=trials,
        concurrency=concurrency,
        resume=resume,
        overwrite=overwrite,
        simulator=simulator,
        agent_options=agent_options,
        task_ids=task_ids,
        backend=backend,
    )
    click.echo(headline(result.report, result.out_dir))
    errored = [t for t in result.traces if t.ended_by == "error"]
    if result.traces and len(errored) == len(result.traces):
        click.echo(f"error: every episode errored (first: {errored[0].error}); see {out}/traces.jsonl", err=True)
        sys.exit(1)
    if result.traces and all(not t.calls and not any(m.role == "assistant" for m in t.messages) for t in result.traces):
        click.echo(
            f"error: every episode is empty (the agent neither spoke nor called a tool); see {out}/traces.jsonl",
            err=True,
        )
        sys.exit(1)
    if errored:
        click.echo(
            f"warning: {len(errored)} of {len(result.traces)} episodes errored (first, {errored[0].task_id}: "
            f"{errored[0].error}); they score 0 (see {out}/traces.jsonl)",
            err=True,
        )


def _selected_tasks(source, select: dict) -> list[str] | None:
    """The task ids ``select`` keeps, in the world's order (None: every task)."""
    from fnmatch import fnmatchcase

    from ..errors import UsageError
    from ..worlds.load import load_world

    patterns, limit = select.get("patterns") or [], select.get("limit")
    if not patterns and limit is None:
        return None
    w = load_world(source)
    try:
        ids = [t.id for t in w.tasks if not patterns or any(fnmatchcase(t.id, p) for p in patterns)]
    finally:
        w.close()
    if not ids:
        raise UsageError.single("--question-id", f"no task of the world matches {', '.join(patterns)}")
    return ids[:limit] if limit is not None else ids


def headline(report, out_dir: Path) -> str:
    classes = ", ".join(f"{k} {v}" for k, v in report.failure_classes.items())
    pass_k = " ".join(f"pass^{k} {v:.3f}" for k, v in report.pass_hat_k.items())
    return (
        f"world {report.world} · agent {report.agent} · {report.episodes} episodes\n"
        f"reward {report.reward:.3f} · score {report.score:.3f} · run S_adj {report.run_s_adj:.3f} · "
        f"v {report.run_violation_rate:.3f} · state {report.state_consistency:.3f} · "
        f"efficiency {report.tool_efficiency:.3f} · {pass_k}\n"
        f"classes: {classes}\n"
        f"reports: {out_dir / 'report.html'} · {out_dir / 'report.md'}"
    )


@click.group()
def worlds() -> None:
    """Worlds: stateful tools, a simulated user, judged from the final state (docs/worlds.md)."""


@worlds.command("list")
def list_() -> None:
    """List the bundled worlds."""
    from ..contract.packs import bundled_worlds

    for name, path in bundled_worlds().items():
        click.echo(f"{name}\t{path}")


@worlds.command("check")
@click.argument("world")
def check(world: str) -> None:
    """Load WORLD and replay every task's gold actions: every problem located (exit 2), else a summary."""
    from ..worlds.load import load_world

    w = load_world(world)
    try:
        writes = sum(1 for t in w.tasks if any(w.manifest.tools[a.tool].kind == "write" for a in t.gold_actions))
        kinds = {k: sum(1 for t in w.manifest.tools.values() if t.kind == k) for k in ("read", "write")}
        click.echo(
            f"world {w.name}: {len(w.manifest.tables)} tables, {kinds['read']} read and {kinds['write']} write tools, "
            f"{len(w.tasks)} tasks ({writes} with writes, {len(w.tasks) - writes} that change nothing), "
            f"mode {w.manifest.violation_mode}, initial state {w.digest[:16]}"
        )
    finally:
        w.close()


@worlds.command("gate")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--min-reward",
    type=NumberRange(0, 1),
    default=None,
    help="Mean reward (completion) at least this.",
)
@click.option("--min-s-adj", type=NumberRange(0, 1), default=None, help="Run S_adj at least this.")
@click.option("--max-violation-rate", type=NumberRange(0, 1), default=None, help="Run v at most this.")
@click.option("--allow-errors", is_flag=True, help="Do not fail on errored episodes or user-simulator errors.")
def gate(
    out: Path, min_reward: float | None, min_s_adj: float | None, max_violation_rate: float | None, allow_errors: bool
) -> None:
    """Fail (exit 1) when the world run in OUT breaks a threshold, or when it is broken (an errored
    episode, a user-simulator error, a run.json that does not say completed) unless --allow-errors."""
    from ..errors import ContractError, UsageError
    from ..worlds.run import read_traces
    from ..worlds.scorecard import WorldReport

    if min_reward is None and min_s_adj is None and max_violation_rate is None:
        raise UsageError.single(
            "--min-reward", "name at least one threshold (--min-reward, --min-s-adj, --max-violation-rate)"
        )
    path = out / "report.json"
    if not path.is_file():
        raise ContractError.single(
            str(path), "no report.json here: run the world first (groundeval run WORLD --out OUT)"
        )
    try:
        report = WorldReport.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ContractError.single(str(path), f"not a world report: {str(exc).splitlines()[0]}") from None
    failures = []
    # "not >=" rather than "<": a NaN figure in a report.json fails the threshold instead of passing it
    if min_reward is not None and not report.reward >= min_reward:
        failures.append(f"reward {report.reward:.3f} < {min_reward:.3f}")
    if min_s_adj is not None and not report.run_s_adj >= min_s_adj:
        failures.append(f"run S_adj {report.run_s_adj:.3f} < {min_s_adj:.3f}")
    if max_violation_rate is not None and not report.run_violation_rate <= max_violation_rate:
        failures.append(f"run violation rate {report.run_violation_rate:.3f} > {max_violation_rate:.3f}")
    if not allow_errors:
        errored = report.failure_classes.get("agent_error", 0)
        if errored:
            failures.append(f"{errored} episodes are agent_error (errored or inconsistent): they measured nothing")
        empty = sum(1 for r in report.rows if r.turns == 0 and r.steps == 0 and r.failure_class != "agent_error")
        if empty:
            failures.append(
                f"{empty} episodes are empty (the agent neither spoke nor called a tool): they measured nothing"
            )
        if report.user_errors:
            failures.append(f"{report.user_errors} user-simulator errors: the runs do not measure the agent alone")
        problem = _run_json_problem(out / "run.json")
        if problem:
            failures.append(problem)
        traces = out / "traces.jsonl"
        if traces.is_file() and len(read_traces(traces)) != report.episodes:
            failures.append("traces.jsonl and report.json disagree on the episodes: re-score the run")
    for f in failures:
        click.echo(f"FAIL {f}", err=True)
    if failures:
        sys.exit(1)
    click.echo(f"pass: world {report.world}, agent {report.agent}, {report.episodes} episodes")


def _run_json_problem(path: Path) -> str | None:
    """Why a world run's ``run.json`` does not say it completed (None without one, or when it does)."""
    import json

    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict):  # torn or not a run record: not known to have completed
        return "run.json cannot be read (not a run record): the run is not known to have completed"
    status = doc.get("status")
    return None if status in (None, "completed") else f"run.json says {status}"


@worlds.command("score")
@click.argument("world")
@click.argument("traces", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None)
def score(world: str, traces: Path, out: Path | None) -> None:
    """Re-score saved world TRACES against WORLD (no agent runs): verdicts and reports."""
    from ..worlds.run import score_world

    result = score_world(world, traces, out)
    click.echo(headline(result.report, result.out_dir))


@worlds.command("run")
@click.argument("world")
@click.option(
    "--agent",
    "-a",
    required=True,
    help="gold | skip-confirm | wrong-arg | forbidden | early-stop | padding | openai:<model> | module:factory",
)
@click.option("--out", "-o", type=click.Path(file_okay=False), default=None)
@click.option("--trials", type=click.IntRange(1), default=1, show_default=True)
@click.option("--concurrency", "-j", type=click.IntRange(1), default=1, show_default=True)
@click.option("--resume", is_flag=True)
@click.option("--overwrite", is_flag=True)
@click.option("--base-url", default=None, help="openai:<model> agents: the OpenAI-compatible server.")
@click.option("--api-key-env", default=None, help="openai:<model> agents and LLM users: the key's variable.")
@click.option(
    "--simulator",
    default="deterministic",
    show_default=True,
    help="deterministic | llm:<model> (a model plays the user; --user-base-url)",
)
@click.option("--user-base-url", default=None, help="llm:<model> simulator: the OpenAI-compatible server.")
@backend_options(db=False)
def run(
    world,
    agent,
    out,
    trials,
    concurrency,
    resume,
    overwrite,
    base_url,
    api_key_env,
    simulator,
    user_base_url,
    backend,
    ray_address,
    workers,
    ray_runtime_env,
) -> None:
    """Run an agent on every task of WORLD (same as ``groundeval run WORLD``), with LLM options.
    With --backend ray the episodes run on Ray workers (docs/ray.md); the outputs are the same."""
    sim = None
    if simulator.startswith("llm:"):
        from ..worlds.llm import LLMUser

        sim = LLMUser(simulator[4:], user_base_url or base_url or "https://api.openai.com/v1", api_key_env=api_key_env)
    elif simulator != "deterministic":
        raise click.BadParameter("deterministic or llm:<model>", param_hint="--simulator")
    be = make_backend(backend, ray_address, workers, ray_runtime_env)
    try:
        run_world_command(
            world,
            agent,
            out,
            trials=trials,
            concurrency=concurrency,
            resume=resume,
            overwrite=overwrite,
            simulator=sim,
            agent_options={"base_url": base_url, "api_key_env": api_key_env},
            backend=be,
        )
    finally:
        be.close()


@worlds.command("serve")
@click.argument("world")
@click.option("--traces", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Append traces here.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@http_options(port=8766)
def serve(
    world: str,
    traces: Path,
    transport: str,
    host: str,
    port: int,
    allow_remote: bool,
    token_env: str,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
) -> None:
    """Serve WORLD's tools over MCP: start_episode, say, the world's tools, end_episode."""
    import anyio

    from ..extras import require
    from ..worlds.load import load_world

    tokens = network_settings(host, allow_remote, token_env) if transport == "http" else None
    require("mcp", "groundeval worlds serve")
    from ..worlds.mcp import WorldHub, serve_http, serve_stdio

    w = load_world(world)
    hub = WorldHub(w, traces)
    try:
        if transport == "stdio":
            anyio.run(serve_stdio, hub)
        else:
            auth = f" (bearer tokens from ${token_env})" if tokens else ""
            click.echo(f"serving world {w.name} at http://{host}:{port}/mcp{auth}", err=True)
            anyio.run(
                lambda: serve_http(
                    hub,
                    host,
                    port,
                    tokens=tokens,
                    allowed_hosts=list(allowed_hosts),
                    allowed_origins=list(allowed_origins),
                )
            )
    finally:
        w.close()


def _add_import() -> None:  # issue 28: `groundeval worlds import tau2 DOMAIN OUT` lives in its own module
    from .worlds_import import import_world

    worlds.add_command(import_world, "import")


_add_import()
