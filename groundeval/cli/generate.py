"""``groundeval generate``: write questions.json and print the shortcut audit."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from ..questions.audit import STRATEGIES
from ..questions.generate import generate as generate_questions
from ..questions.io import write_questions
from ..store.store import Store


@click.command()
@click.argument("pack", type=click.Path(exists=True))
@click.option("-o", "--out", type=click.Path(dir_okay=False), default="questions.json", show_default=True)
@click.option("--seed", type=int, default=None, help="Override the pack's evaluation seed.")
@click.option("--db", type=click.Path(), help="Keep the DuckDB database in this file and reuse it.")
def generate(pack: str, out: str, seed: int | None, db: str | None) -> None:
    """Generate balanced Perspective, Counterfactual and Silence questions for PACK."""
    qs = generate_questions(Store.open(pack, db=db), seed=seed)
    write_questions(qs, out)
    console = Console(stderr=True, width=110)
    m = qs.metadata
    console.print(f"wrote [bold]{out}[/bold]: {m.counts['total']} questions (seed {m.seed}, "
                  f"digest {m.contract_digest[:12]})")
    table = Table(title="shortcut audit (accuracy of trivial strategies)", title_justify="left")
    table.add_column("track")
    table.add_column("n", justify="right")
    for s in STRATEGIES:
        table.add_column(s.replace("majority_per_", "majority/").replace("_", " "), justify="right")
    for track, row in m.shortcut_audit.items():
        cells = [f"[red]{row[s]:.2f}[/red]" if row[s] > 0.6 else f"{row[s]:.2f}" for s in STRATEGIES]
        table.add_row(track, str(row["questions"]), *cells)
    console.print(table)
    for track in ("perspective", "counterfactual", "silence"):
        buckets = m.counts.get(track, {}).get("buckets", {})
        console.print(f"{track}: " + (", ".join(f"{b} {n}" for b, n in buckets.items()) or "none"))
