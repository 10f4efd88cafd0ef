"""``groundeval --help`` lists every command without importing any heavy module, and the
one-line help it shows is the one click computes from the imported command."""

from __future__ import annotations

import subprocess
import sys

import click

from groundeval.cli.main import COMMANDS, LazyGroup, _short_help, cli

HEAVY = ("duckdb", "pydantic", "networkx", "rich", "jsonschema", "yaml", "jinja2")


def _imported_by(args: list[str]) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "groundeval.cli.main", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line}


def test_help_imports_no_heavy_module():
    mods = _imported_by(["--help"])
    assert "click" in mods
    assert not sorted(m for m in mods if m.split(".")[0] in HEAVY)
    assert not sorted(m for m in mods if m.startswith("groundeval.cli.") and m != "groundeval.cli.main")


def test_listing_matches_the_commands_short_help():
    width = 80
    for name in COMMANDS:
        cmd = LazyGroup._load(name)
        if cmd is None:  # a command whose module is broken or missing is not listed
            continue
        limit = width - 6 - max(len(n) for n in COMMANDS)
        assert _short_help(name, limit) == cmd.get_short_help_str(limit), name


def test_help_lists_every_loadable_command():
    out = subprocess.run(
        [sys.executable, "-m", "groundeval.cli.main", "--help"], capture_output=True, text=True, check=True
    ).stdout
    listed = {line.split()[0] for line in out.split("Commands:", 1)[1].splitlines() if line.strip()}
    assert listed == {n for n in COMMANDS if LazyGroup._load(n) is not None}


def test_a_decorator_that_sets_help_falls_back_to_importing(monkeypatch):
    import groundeval.cli.main as main

    @click.command(short_help="short one")
    def fake() -> None:
        """Long docstring that is not what click shows."""

    monkeypatch.setitem(COMMANDS, "fake", "groundeval.cli.main:fake")
    monkeypatch.setattr(main, "fake", fake, raising=False)
    assert main._docstring("groundeval.cli.main", "fake") is None  # not defined at module level in the source
    assert _short_help("fake", 40) == "short one"
    assert "fake" in cli.list_commands(click.Context(cli))
