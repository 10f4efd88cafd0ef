"""``groundeval info`` and ``groundeval schema``."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..contract import schemas
from ..errors import ContractError
from .options import PACK, force_option, open_pack


@click.command()
@click.argument("pack", type=PACK)
@force_option
@click.option("--db", type=click.Path(), help="Keep the DuckDB database in this file and reuse it.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def info(pack: str, force: bool, db: str | None, as_json: bool) -> None:
    """Summarise a pack: actors, roles, subsystems, events, artifacts, references, span, digest."""
    store = open_pack(pack, db=db, force=force)
    try:
        s = store.summary()
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(s, indent=2, sort_keys=True))
        return
    console = Console()
    console.print(f"[bold]{s['name']}[/bold]  digest [cyan]{s['digest'][:16]}[/cyan]  timezone {s['timezone']}")
    console.print(
        f"{s['events']} events, {s['artifacts']} artifacts, {s['actors']} actors, span {s['start']} .. {s['end']}"
    )
    console.print(f"roles: {', '.join(s['roles']) or '-'}")
    console.print(f"subsystems: {', '.join(s['subsystems']) or '-'}")
    refs = s["references"]
    console.print(
        f"references: {refs['resolved']} to artifacts of the corpus, {refs['dangling']} dangling "
        f"(the corpus lacks them), {refs['identifiers']} identifiers (keys that are no subsystem)"
    )
    for title, counts in (
        ("events by type", s["events_by_type"]),
        ("artifacts by subsystem", s["artifacts_by_subsystem"]),
    ):
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


@click.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print name, path and description as JSON.")
def packs(name: str | None, as_json: bool) -> None:
    """List the packs bundled with groundeval (or print the folder of pack NAME).

    Every command that takes a PACK accepts these names: ``groundeval eval tiny``. To start
    your own, copy one: ``cp -r "$(groundeval packs tiny)" my-pack``."""
    import yaml

    from ..contract.packs import bundled_packs

    found = bundled_packs()
    from ..contract.packs import bundled_worlds  # worlds (docs/worlds.md) are the other kind

    worlds = bundled_worlds()
    if name is not None and name not in found and name in worlds:
        click.echo(str(worlds[name]))
        return
    if name is not None:
        if name not in found:
            raise ContractError.single(
                name,
                f"no bundled pack or world of that name (bundled packs: {', '.join(found) or 'none'};"
                f" bundled worlds: {', '.join(worlds) or 'none'})",
            )
        click.echo(str(found[name]))
        return
    rows = []
    for pack_name, path in found.items():
        manifest = next(
            path / m for m in ("groundeval.yaml", "groundeval.yml", "groundeval.json") if (path / m).is_file()
        )
        try:
            data = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            data = {}
        description = " ".join(str(data.get("description") or "").split()) if isinstance(data, dict) else ""
        rows.append({"name": pack_name, "path": str(path), "description": description, "kind": "pack"})
    world_rows = []
    for world_name, path in worlds.items():
        try:
            data = yaml.safe_load((path / "world.yaml").read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            data = {}
        description = " ".join(str(data.get("description") or "").split()) if isinstance(data, dict) else ""
        world_rows.append({"name": world_name, "path": str(path), "description": description, "kind": "world"})
    if as_json:
        rows += world_rows
        click.echo(json.dumps(rows, indent=2, sort_keys=True))
        return
    if not rows:
        click.echo("no bundled packs found", err=True)
        return
    console = Console(width=120)
    table = Table(
        title="bundled packs (use the name as PACK: groundeval eval tiny --agent oracle)", title_justify="left"
    )
    table.add_column("name", no_wrap=True)
    table.add_column("description")
    for r in rows:
        table.add_row(r["name"], r["description"])
    console.print(table)
    console.print(f"folder: {Path(rows[0]['path']).parent}")
    from ..tasks import examples  # task contracts for an agent's own tools are another kind of pack

    tasks = ", ".join(examples())
    if tasks:
        console.print(f"task-contract examples (groundeval tasks example NAME; docs/tasks.md): {tasks}")
    if world_rows:
        console.print(
            "worlds (groundeval run NAME --agent gold --out DIR; docs/worlds.md): "
            + ", ".join(r["name"] for r in world_rows)
        )
