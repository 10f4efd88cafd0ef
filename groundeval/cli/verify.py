"""``groundeval verify``: the graduated contract verifier (``groundeval.verifier``).

Exit codes: 0 no finding at or above --fail-on; 1 such findings (or, with
--fail-on-removed, coverage removed since the baseline); 2 unusable input.
"""

from __future__ import annotations

import sys

import click

from .options import PACK


@click.command()
@click.argument("pack", type=PACK)
@click.option(
    "--level",
    type=click.IntRange(1, 4),
    default=4,
    show_default=True,
    help="1 shape, 2 references, 3 semantics, 4 dry run (each includes the ones below).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning"]),
    default="error",
    show_default=True,
    help="Lowest severity that makes the exit code 1.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "sarif", "junit"]), default="table", show_default=True
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
@click.option("--baseline", type=click.Path(dir_okay=False), help="A saved verification to report drift against.")
@click.option("--fail-on-removed", is_flag=True, help="Exit 1 when coverage was removed since --baseline.")
@click.option("--save-baseline", type=click.Path(dir_okay=False), help="Save this verification (JSON) as a baseline.")
def verify(
    pack: str,
    level: int,
    fail_on: str,
    fmt: str,
    out: str | None,
    baseline: str | None,
    fail_on_removed: bool,
    save_baseline: str | None,
) -> None:
    """Check that a pack is sound before any agent runs on it."""
    from groundeval import verifier
    from groundeval.verifier import drift, output

    if fail_on_removed and not baseline:
        raise click.UsageError("--fail-on-removed needs --baseline")
    base = drift.load_baseline(baseline) if baseline else None
    result = verifier.verify(pack, level=level)
    removed = bool(base is not None and any(f.rule == "GE501" for f in drift.apply_baseline(result, base)))
    if save_baseline:
        output.write(output.render_json(result), save_baseline)
    if fmt == "table":
        if out:
            from rich.console import Console

            with open(out, "w", encoding="utf-8") as fh:
                output.render_table(result, Console(file=fh, width=160, color_system=None))
        else:
            output.render_table(result)
    else:
        text = output.render(result, fmt, fail_on)
        if out:
            output.write(text, out)
        else:
            click.echo(text, nl=False)
    if out:
        click.echo(output.summary_line(result), err=True)
    if result.failed(fail_on) or (fail_on_removed and removed):
        sys.exit(1)  # not click's Exit: main() runs click with standalone_mode=False, which swallows it
