"""``groundeval view FOLDER``: a static browser of every run under FOLDER (groundeval.report.view)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the page (default: FOLDER/index.html).",
)
def view(folder: Path, out: Path | None) -> None:
    """Write one static HTML page browsing every run under FOLDER (each folder holding a
    report.json): filter the runs, open each run's report, and compare two runs question by
    question, side by side, with the tool calls that differ. No server: open the file."""
    from ..report.view import write

    skipped: list[str] = []
    path = write(folder, out, skipped)
    for reason in skipped:
        click.echo(f"note: left out: {reason}", err=True)
    click.echo(f"view: {path}")
