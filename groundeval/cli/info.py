"""``groundeval info`` and ``groundeval schema``."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..contract import schemas
from ..store.store import Store


@click.command()
@click.argument("pack", type=click.Path(exists=True))
@click.option("--db", type=click.Path(), help="Keep the DuckDB database in this file and reuse it.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def info(pack: str, db: str | None, as_json: bool) -> None:
    """Summarise a pack: actors, roles, subsystems, events, artifacts, span, digest."""
    s = Store.open(pack, db=db).summary()
    if as_json:
        click.echo(json.dumps(s, indent=2, sort_keys=True))
        return
    console = Console()
    console.print(f"[bold]{s['name']}[/bold]  digest [cyan]{s['digest'][:16]}[/cyan]  timezone {s['timezone']}")
    console.print(f"{s['events']} events, {s['artifacts']} artifacts, {s['actors']} actors, "
                  f"span {s['start']} .. {s['end']}")
    console.print(f"roles: {', '.join(s['roles']) or '-'}")
    console.print(f"subsystems: {', '.join(s['subsystems']) or '-'}")
    for title, counts in (("events by type", s["events_by_type"]), ("artifacts by subsystem", s["artifacts_by_subsystem"])):
        table = Table(title=title, title_justify="left")
        table.add_column("name")
        table.add_column("count", justify="right")
        for k, v in counts.items():
            table.add_row(k, str(v))
        console.print(table)


@click.command()
@click.option("--out", type=click.Path(file_okay=False), help="Write every schema into this folder.")
@click.argument("name", required=False)
def schema(out: str | None, name: str | None) -> None:
    """Print one JSON Schema (NAME) or write all of them (--out contracts)."""
    if out:
        for path in schemas.write_all(Path(out)):
            click.echo(str(path))
        return
    if name is None or name not in schemas.SCHEMAS:
        raise click.UsageError(f"NAME must be one of: {', '.join(sorted(schemas.SCHEMAS))}")
    click.echo(schemas.render(name), nl=False)
