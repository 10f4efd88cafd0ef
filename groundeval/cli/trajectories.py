"""``groundeval trajectories``: read and verify files of agent trajectories by replay
(docs/trajectories.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.group()
def trajectories() -> None:
    """Trajectory files (tau2, tau-bench, OpenAI, Anthropic, world traces): read, verify by replay."""


@trajectories.command("verify")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--world", "-w", required=True, help="A world folder, a bundled world's name, or tau2:<domain>.")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output folder.")
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Labels: JSON Lines {id, reward|label} or CSV id,label (default: the rewards in the file).",
)
@click.option(
    "--shape",
    type=click.Choice(["auto", "tau2", "tau-bench", "openai", "anthropic", "world-trace"]),
    default="auto",
    show_default=True,
    help="Read every record as this shape instead of telling it from the content.",
)
@click.option(
    "--workers",
    "-j",
    type=click.IntRange(1),
    default=None,
    help="Worker processes (default: every core); with --backend ray, Ray workers (default: the cluster's CPUs).",
)
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where trajectories are verified: worker processes here, or a Ray cluster (pip install "
    "'groundeval[ray]'; outputs are the same bytes; docs/ray.md).",
)
@click.option(
    "--ray-address",
    default=None,
    help="--backend ray: the cluster to join (default: $RAY_ADDRESS, else a local Ray instance).",
)
@click.option("--ray-runtime-env", default=None, help="--backend ray: Ray runtime_env as a JSON object.")
@click.option("--progress/--no-progress", default=None, help="Progress on stderr (default: when it is a terminal).")
@click.option(
    "--judge",
    default=None,
    metavar="PROVIDER:MODEL",
    help="An LLM judge (openai:<model>, anthropic:<model>) for tau2's natural-language assertions "
    "(default: none; they are reported as needing a judge).",
)
@click.option("--judge-base-url", default=None, help="The judge's server (an OpenAI- or Anthropic-compatible URL).")
@click.option("--judge-api-key-env", default=None, metavar="VAR", help="The variable holding the judge's API key.")
@click.option(
    "--judge-cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The judge's response cache (default: <groundeval cache dir>/trajectory-judge).",
)
@click.option(
    "--judge-concurrency",
    type=click.IntRange(1),
    default=None,
    help="Judge requests at once per worker (threads; default 4).",
)
def verify(
    file: Path,
    world: str,
    out: Path,
    labels: Path | None,
    shape: str,
    workers: int | None,
    progress,
    backend: str,
    ray_address: str | None,
    ray_runtime_env: str | None,
    **judging,
) -> None:
    """Replay each trajectory of FILE on WORLD: recorded outputs vs replayed, the verdict, policy;
    writes kept.jsonl, rejected.jsonl, summary.json and report.md into OUT."""
    from ..trajectories.run import verify_file
    from .options import make_backend

    ray = backend == "ray"  # --workers is the local backend's processes, or Ray's workers
    be = make_backend(backend, ray_address, workers if ray else None, ray_runtime_env)
    try:
        s = verify_file(
            file,
            world,
            out,
            labels=labels,
            workers=None if ray else workers,
            shape=shape,
            progress=progress,
            backend=be,
            **judging,
        )
    finally:
        be.close()
    click.echo(f"{s.total} records · kept {s.kept} · rejected {s.rejected} (unreadable {s.unreadable}) -> {out}")
    if s.reasons:
        click.echo("reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(s.reasons.items())))
    if s.judge is not None:
        j = s.judged
        click.echo(
            f"judge {s.judge}: {sum(j.values())} judged · all met {j['all_met']} · not met {j['not_met']} · "
            f"judge errors {j['error']}"
        )
    if s.labelled:
        c, m = s.confusion, s.metrics()
        click.echo(
            f"labels: {s.labelled} · kept/label1 {c['tp']} · kept/label0 {c['fp']} · rejected/label1 {c['fn']} · "
            f"rejected/label0 {c['tn']}"
        )
        fmt = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
        click.echo(f"precision {fmt(m['precision'])} · recall {fmt(m['recall'])} · F1 {fmt(m['f1'])}")
        if c["fp"] + c["fn"]:
            click.echo(f"disagreements: {c['fp'] + c['fn']} (listed in {out / 'disagreements.jsonl'})")
    if not s.total:  # nothing verified is not a pass
        click.echo(
            f"error: {file} holds no records (an empty or blank file, an empty list, or results without "
            "simulations): nothing was verified",
            err=True,
        )
        sys.exit(2)
    if s.unreadable == s.total:
        first = json.loads((out / "rejected.jsonl").read_text(encoding="utf-8").split("\n", 1)[0])
        at = (
            f"{first['where']['file']}:{first['where']['line']}"
            if first["where"].get("line")
            else first["where"]["file"]
        )
        click.echo(
            f"error: no record of the file could be read (the first, {at}: {first['reasons'][0]['message']}; "
            f"all in {out / 'rejected.jsonl'})",
            err=True,
        )
        sys.exit(2)
    readable = s.total - s.unreadable
    if readable and s.reasons.get("no_task", 0) >= readable:  # nothing verified: not a result
        click.echo(
            f"error: no trajectory of the file ({readable} read) names a task of world {world} "
            f"(is it the right --world?); see {out / 'rejected.jsonl'}",
            err=True,
        )
        sys.exit(2)
    if labels is not None and not s.labelled:  # the comparison asked for was not made: not a pass
        click.echo(
            f"error: --labels: {labels} labels none of the {readable} trajectories read (a label names a "
            f"trajectory by its id, as {out / 'kept.jsonl'} and rejected.jsonl list them): nothing was compared",
            err=True,
        )
        sys.exit(2)


@trajectories.command("read")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--shape", default="auto", show_default=True)
def read(file: Path, shape: str) -> None:
    """Print one summary line per trajectory of FILE (its shape, task, calls) and each problem."""
    from ..trajectories import ReadProblem, read_trajectories

    bad = 0
    for t in read_trajectories(file, shape):
        if isinstance(t, ReadProblem):
            bad += 1
            click.echo(f"problem: {t}", err=True)
        else:
            click.echo(json.dumps(t.summary(), sort_keys=True))
    if bad:
        sys.exit(2)
