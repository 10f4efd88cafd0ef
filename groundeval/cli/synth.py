"""``groundeval synth`` and ``groundeval bench``: thin wrappers over ``groundeval.synth`` / ``groundeval.bench``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click


@click.command()
@click.argument("out", type=click.Path(file_okay=False))
@click.option(
    "--events",
    "-n",
    type=click.IntRange(min=1),
    default=22500,
    show_default=True,
    help="Exact number of events to write.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Same seed, same bytes.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["native", "original"]),
    default="native",
    show_default=True,
    help="native: groundeval.yaml + events.jsonl + artifacts.jsonl; original: config.yaml + "
    "events.jsonl + artifacts/<subsystem>/<id>.json.",
)
@click.option("--days", type=click.IntRange(min=1), default=60, show_default=True, help="Length of the log.")
@click.option(
    "--style",
    type=click.Choice(["default", "paper"]),
    default="default",
    show_default=True,
    help="default: ids in facts, one instance per id; paper: the shapes of real exports "
    "(bookkeeping-only facts, ids only in artifact_ids, dense same-minute multi-actor events).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: all cores); the output does not depend on it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def synth(out: str, events: int, seed: int, fmt: str, days: int, style: str, jobs: int | None, as_json: bool) -> None:
    """Write a deterministic synthetic organisation into OUT (72 actors, 9 subsystems,
    25 causal link types, 19 silence pair types)."""
    from ..synth.generate import write_org

    started = time.perf_counter()
    summary = write_org(out, events=events, seed=seed, fmt=fmt, days=days, jobs=jobs, style=style)
    summary["seconds"] = round(time.perf_counter() - started, 3)
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True))
        return
    click.echo(
        f"wrote {summary['events']} events and {summary['artifacts']} artifacts to {out} "
        f"({fmt}, {style} style, seed {seed}) in {summary['seconds']:.1f} s"
    )
    click.echo("instances: " + ", ".join(f"{k} {v}" for k, v in summary["instances"].items()))


@click.command()
@click.option(
    "--events",
    "-n",
    "scales",
    type=click.IntRange(min=1),
    multiple=True,
    help="Scale(s) in events; repeat for several (default 22500).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--pack",
    "packs",
    type=click.Path(exists=True),
    multiple=True,
    help="Benchmark an existing pack instead of a synthetic one (repeatable).",
)
@click.option(
    "--stages",
    default=None,
    help="Comma-separated stages to run (default all: synth,load,graph,generate,fetch,search,oracle,score; "
    "with --matrix: load,verify1,verify2,verify3,verify4,generate,eval,search,rescore).",
)
@click.option(
    "--samples", type=click.IntRange(min=1), default=200, show_default=True, help="Fetch/search calls timed per scale."
)
@click.option(
    "--oracle-questions",
    type=click.IntRange(min=1),
    default=60,
    show_default=True,
    help="Questions the oracle answers per scale.",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where synthetic packs are written (default: a temporary folder).",
)
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None, help="Write results as JSON.")
@click.option(
    "--matrix",
    is_flag=True,
    help="Whole-process matrix: formats x scales, stages load, verify L1-L4, generate, eval, search, "
    "rescore, each as a fresh groundeval process (wall, CPU, peak RSS) beside its floor.",
)
@click.option(
    "--format",
    "formats",
    type=click.Choice(["native", "original"]),
    multiple=True,
    help="--matrix: pack format(s) (default both).",
)
@click.option(
    "--style",
    type=click.Choice(["default", "paper"]),
    default="default",
    show_default=True,
    help="--matrix: synthetic org style.",
)
@click.option(
    "--rescore-traces",
    type=click.IntRange(min=1),
    default=20000,
    show_default=True,
    help="--matrix: traces re-scored per cell.",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="--matrix: runs per stage; the median run is reported.",
)
@click.option(
    "--original-python",
    default=None,
    help="--matrix: a Python in whose environment the original GroundEval release is importable; its "
    "question generator runs beside `generate` on the original-format packs (rows 'original generate' and "
    "'ours vs original'; 'unavailable' without it).",
)
@click.option(
    "--worlds",
    "worlds_bench",
    is_flag=True,
    help="World episodes instead: set-up cost and episodes/s with the gold agent on generated worlds "
    "(sizes: --world-mb).",
)
@click.option(
    "--world-mb",
    type=click.FloatRange(min=0.01),
    multiple=True,
    help="--worlds: state sizes in MB (default 1, 5, 20).",
)
@click.option(
    "--episodes", type=click.IntRange(min=1), default=300, show_default=True, help="--worlds: episodes per measure."
)
@click.option(
    "--trajectories",
    "trajectory_sizes",
    type=click.IntRange(min=1),
    multiple=True,
    help="Trajectory verification instead: files of this many generated trajectories (repeatable, e.g. "
    "--trajectories 10000 --trajectories 100000), verified per second and peak memory.",
)
@click.option(
    "--trajectory-world",
    default=None,
    help="--trajectories: the world (default tau2:retail with the tau2 extra, else the test world shop).",
)
def bench(
    scales: tuple[int, ...],
    seed: int,
    packs: tuple[str, ...],
    stages: str,
    samples: int,
    oracle_questions: int,
    workdir: str | None,
    json_out: str | None,
    matrix: bool,
    formats: tuple[str, ...],
    style: str,
    rescore_traces: int,
    repeat: int,
    original_python: str | None,
    worlds_bench: bool,
    world_mb: tuple[float, ...],
    episodes: int,
    trajectory_sizes: tuple[int, ...] = (),
    trajectory_world: str | None = None,
) -> None:
    """Measure load, graph and generation, fetch/search latency, an oracle run and re-scoring."""
    if trajectory_sizes:  # issue 28: groundeval/bench/trajectories.py
        from ..bench.trajectories import render, run_trajectory_bench

        result = run_trajectory_bench(tuple(trajectory_sizes), world=trajectory_world)
        click.echo(render(result))
        if json_out:
            Path(json_out).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return
    if worlds_bench:
        from ..bench.worlds import render_worlds, run_worlds_bench

        result = run_worlds_bench(
            list(world_mb) or [1.0, 5.0, 20.0],
            episodes=episodes,
            repeat=max(repeat, 3),
            workdir=Path(workdir) if workdir else None,
            progress=lambda m: click.echo(m, err=True),
        )
        click.echo(render_worlds(result))
        if json_out:
            Path(json_out).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            click.echo(f"wrote {json_out}", err=True)
        return
    if matrix:
        from ..bench.matrix import MATRIX_STAGES, render_matrix, run_matrix

        chosen = [s.strip() for s in stages.split(",") if s.strip()] if stages else list(MATRIX_STAGES)
        unknown = [s for s in chosen if s not in MATRIX_STAGES]
        if unknown:
            raise click.BadParameter(
                f"unknown matrix stage(s) {', '.join(unknown)}; expected some of {', '.join(MATRIX_STAGES)}",
                param_hint="--stages",
            )
        result = run_matrix(
            scales=list(scales) or [22500],
            formats=list(formats) or ["native", "original"],
            seed=seed,
            style=style,
            stages=chosen,
            rescore_traces=rescore_traces,
            samples=samples,
            repeat=repeat,
            workdir=Path(workdir) if workdir else None,
            progress=lambda m: click.echo(m, err=True),
            original_python=original_python,
        )
        render_matrix(result)
        if json_out:
            Path(json_out).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            click.echo(f"wrote {json_out}", err=True)
        _fail_if_nothing_measured(result.get("matrix", []))
        return
    from ..bench.run import render_table, run_bench

    wanted = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
    result = run_bench(
        scales=list(scales) or ([] if packs else [22500]),
        packs=[Path(p) for p in packs],
        seed=seed,
        stages=wanted,
        samples=samples,
        oracle_questions=oracle_questions,
        workdir=Path(workdir) if workdir else None,
        progress=lambda m: click.echo(m, err=True),
    )
    render_table(result)
    if json_out:
        Path(json_out).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        click.echo(f"wrote {json_out}", err=True)
    _fail_if_nothing_measured(result.get("runs", []))


def _fail_if_nothing_measured(columns: list) -> None:
    """Exit 1 when no stage of any column measured anything (each failed or was unavailable): a table
    of errors is not a benchmark. One stage measured is enough; the failed ones say why in the table."""
    cells = [c for col in columns for c in col.get("stages", {}).values() if isinstance(c, dict) and "status" in c]
    if cells and not any(c["status"] == "ok" for c in cells):
        click.echo(f"error: nothing was measured: all {len(cells)} stages failed or were unavailable", err=True)
        sys.exit(1)
