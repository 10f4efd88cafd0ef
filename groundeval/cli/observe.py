"""``groundeval observe`` (import a recorded run, draft a task contract for review) and
``groundeval tasks`` (check a contract, score runs against it, list the examples).

Exit codes: 0 success (every scored run passes); 1 some run fails its contract; 2 unusable
input, or an unreviewed contract scored without ``--allow-unreviewed``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

FORMATS = ["auto", "otel", "trace", "run"]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "run"


def _run_files(paths: tuple[str, ...]) -> list[Path]:
    from ..errors import ContractError

    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in (".json", ".jsonl"))
            if not found:
                raise ContractError.single(str(p), "no .json or .jsonl run files in this folder")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise ContractError.single(str(p), "no such file or directory")
    return out


def _contract_path(value: str) -> Path:
    """A path, or the name of an example task pack (``support``)."""
    from ..tasks import example
    from ..tasks.load import find_contract

    p = Path(value)
    if not p.exists() and "/" not in value and "\\" not in value:
        return find_contract(example(value))
    return find_contract(p)


@click.command()
@click.argument("recording", type=click.Path(dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    required=True,
    help="Folder for the imported runs, the draft task.yaml and review.md.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="auto",
    show_default=True,
    help="What RECORDING holds (auto: recognised from its content).",
)
@click.option("--task", "task_name", default="observed-task", show_default=True, help="Name of the drafted task.")
@click.option("--force", is_flag=True, help="Overwrite a contract in --out even if it was reviewed.")
def observe(recording: str, out_dir: str, fmt: str, task_name: str, force: bool) -> None:
    """Import a recorded run (OpenTelemetry spans or traces) and draft a task contract to review."""
    from ..errors import ContractError
    from ..observe import read_runs, write_run
    from ..tasks.draft import draft_contract, review_checklist
    from ..tasks.load import dump_contract, load_contract

    runs = read_runs(recording, fmt)  # type: ignore[arg-type]
    out = Path(out_dir)
    target = out / "task.yaml"
    if target.exists() and not force:
        try:
            reviewed = load_contract(target).reviewed
        except ContractError:
            reviewed = False
        if reviewed:
            raise ContractError.single(
                str(target),
                "a reviewed contract is here; a draft never replaces it (write the draft elsewhere, or --force)",
                field="reviewed",
            )
    draft = draft_contract(runs, task=task_name)
    out.mkdir(parents=True, exist_ok=True)
    for r in runs:
        write_run(r, out / "runs" / f"{_safe(r.run_id)}.json")
    target.write_text(
        "# DRAFT inferred from observation: review it (review.md), then set reviewed: true\n" + dump_contract(draft),
        encoding="utf-8",
    )
    (out / "review.md").write_text(review_checklist(draft, runs), encoding="utf-8")
    problems = sum(len(r.problems) for r in runs)
    click.echo(
        f"{len(runs)} run(s), {sum(len(r.calls) for r in runs)} tool calls, {problems} problem(s) reading the recording"
    )
    click.echo(f"draft contract (reviewed: false): {target}")
    click.echo(f"review checklist: {out / 'review.md'}")


@click.group()
def tasks() -> None:
    """Task contracts for an agent's own tools: check, score observed runs, examples."""


@tasks.command("check")
@click.argument("contract")
def check(contract: str) -> None:
    """Check a task contract; exit 2 with every located problem when it is not valid."""
    from ..tasks.load import load_contract

    path = _contract_path(contract)
    c = load_contract(path)
    state = "reviewed" if c.reviewed else "DRAFT (reviewed: false)"
    click.echo(
        f"{path}: task {c.task}, {len(c.roles)} roles, {len(c.tools)} tools, {len(c.decisions)} decisions, {state}"
    )


@tasks.command("score")
@click.argument("contract")
@click.argument("runs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True)
@click.option("--allow-unreviewed", is_flag=True, help="Score against a draft contract anyway (marked in the output).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Write scores.jsonl, report.json and report.html (with each run's timeline) here.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON score per run.")
def score(
    contract: str, runs: tuple[str, ...], fmt: str, allow_unreviewed: bool, out_dir: str | None, as_json: bool
) -> None:
    """Score observed runs against a task contract (exit 1 when a run fails it)."""
    from ..observe import read_runs
    from ..tasks import score_contract_runs
    from ..tasks.load import load_contract
    from ..tasks.report import scores_jsonl, write_task_reports

    path = _contract_path(contract)
    c = load_contract(path)
    observed = [r for f in _run_files(runs) for r in read_runs(f, fmt)]  # type: ignore[arg-type]
    scores = score_contract_runs(c, observed, allow_unreviewed=allow_unreviewed, source=str(path))
    if as_json:
        click.echo(scores_jsonl(scores), nl=False)
    else:
        if not c.reviewed:
            click.echo("warning: scored against an UNREVIEWED draft contract", err=True)
        width = max([len(s.run_id) for s in scores] + [3])
        click.echo(f"{'run':<{width}}  {'class':<26} {'S_adj':>6} {'v':>6}  failures")
        for s in scores:
            click.echo(
                f"{s.run_id:<{width}}  {s.failure_class:<26} {s.s_adj:>6.3f} {s.violation_rate:>6.3f}  "
                f"{', '.join(s.failures) or '-'}"
            )
    if out_dir:
        for p in write_task_reports(c, observed, scores, out_dir).values():
            click.echo(str(p), err=True)
    if any(s.failure_class != "pass" for s in scores):
        sys.exit(1)


@tasks.command("example")
@click.argument("name", required=False)
def example_cmd(name: str | None) -> None:
    """List the example task packs, or print the folder of example NAME."""
    from ..tasks import example, examples

    if name is None:
        for n, p in examples().items():
            click.echo(f"{n}\t{p}")
        return
    click.echo(str(example(name)))
