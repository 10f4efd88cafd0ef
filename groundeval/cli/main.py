"""Entry point. Subcommands live in their own modules and are imported on demand,
so ``groundeval --help`` stays fast and one broken area never hides the others."""

from __future__ import annotations

import gc
import importlib
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator

import click

from ..errors import ContractError, interrupted

# name -> "module:attribute" of a click command; modules are imported lazily.
COMMANDS: dict[str, str] = {
    "info": "groundeval.cli.info:info",
    "packs": "groundeval.cli.info:packs",
    "schema": "groundeval.cli.info:schema",
    "graph": "groundeval.cli.graph:graph",
    "generate": "groundeval.cli.generate:generate",
    "tools": "groundeval.cli.runtime:tools",
    "serve": "groundeval.cli.runtime:serve",
    "score": "groundeval.cli.scoring:score",
    "judge": "groundeval.cli.judge:judge",
    "report": "groundeval.cli.scoring:report",
    "compare": "groundeval.cli.scoring:compare",
    "gate": "groundeval.cli.scoring:gate",
    "view": "groundeval.cli.view:view",
    "verify": "groundeval.cli.verify:verify",
    "run": "groundeval.cli.run:run",
    "eval": "groundeval.cli.run:eval_",
    "synth": "groundeval.cli.synth:synth",
    "bench": "groundeval.cli.synth:bench",
    "observe": "groundeval.cli.observe:observe",
    "tasks": "groundeval.cli.observe:tasks",
    "rl": "groundeval.cli.rl:rl",
    "worlds": "groundeval.cli.worlds:worlds",
    "trajectories": "groundeval.cli.trajectories:trajectories",
}


class LazyGroup(click.Group):
    """Commands are imported only when run. Listing them (``groundeval --help``) reads each
    command's docstring from its module's source with :mod:`ast` instead of importing it,
    so no heavy module (duckdb, pydantic, networkx, rich, jsonschema) is loaded."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    # Set by :func:`entry`, where the process is this one command's: once its modules are imported
    # they live as long as the process, so they are left out of every collection (the first full
    # one otherwise rescans them all, ≈ 20 ms into loading a 22.5K-event pack). Not in-process
    # callers of :func:`main` (tests), whose later garbage a freeze would keep.
    freeze_imports = False

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = self._load(name)
        if command is not None and self.freeze_imports:
            gc.freeze()
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            text = _short_help(name, limit)
            if text is not None:
                rows.append((name, text))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    @staticmethod
    def _load(name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            return None


_DECORATOR_KEYS = {"help", "short_help", "hidden", "deprecated", "epilog", "cls"}


def _short_help(name: str, limit: int) -> str | None:
    """The one-line help of command ``name`` as click computes it, or ``None`` when the
    command cannot be loaded (a broken module hides only its own commands).

    The command's docstring is read from the source with :mod:`ast`; when the decorator
    sets something that changes the help (``help=``, ``short_help=``, ``hidden=`` ...) or
    the function is not found, the module is imported as before."""
    module, attr = COMMANDS[name].split(":")
    doc = _docstring(module, attr)
    if doc is None:
        cmd = LazyGroup._load(name)
        if cmd is None or cmd.hidden:
            return None
        return cmd.get_short_help_str(limit)
    return click.Command(name, help=doc).get_short_help_str(limit)


def _docstring(module: str, attr: str) -> str | None:
    import ast
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        with open(spec.origin, "rb") as fh:
            tree = ast.parse(fh.read(), spec.origin)
    except (ImportError, OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
            calls = [d for d in node.decorator_list if isinstance(d, ast.Call)]
            commands = [
                d
                for d in calls
                if isinstance(d.func, (ast.Attribute, ast.Name))
                and (getattr(d.func, "attr", None) or getattr(d.func, "id", None)) in ("command", "group")
            ]
            if len(commands) != 1 or any(k.arg in _DECORATOR_KEYS or k.arg is None for k in commands[0].keywords):
                return None
            return ast.get_docstring(node)
    return None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="groundeval")
@click.option(
    "--allow-outside",
    "allow_outside",
    multiple=True,
    metavar="PATH",
    type=click.Path(exists=True),
    help="Let packs read files inside PATH too (repeatable). By default a pack reads only inside its own "
    "folder: sources with '..' or absolute paths, and symlinked artifact files pointing elsewhere, are refused.",
)
def cli(allow_outside: tuple[str, ...]) -> None:
    """groundeval: judge-free evaluation of whether an agent reached its answer validly."""
    if allow_outside:
        from ..contract.outside import allow_outside as allow

        allow(allow_outside)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user errors print one clear message and exit 2, never a traceback
    (unreadable or unwritable paths, bytes that are not UTF-8 and inputs nested past
    Python's recursion limit included, when no reader located them first)."""
    with _sigint_noted() as sigint:
        _main(argv, sigint)


@contextmanager
def _sigint_noted() -> Iterator[list[int]]:
    """Python's Ctrl-C handler, also noting that it ran: a library may turn the KeyboardInterrupt
    into an error of its own (DuckDB's ``Query interrupted``; pydantic-core's ``SchemaError`` when
    it lands while a model class is built), which is then known as the abort it is. Left alone
    when the caller (a test, another program) handles SIGINT itself, or off the main thread."""
    import signal

    noted: list[int] = []
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield noted
        return

    def handler(signum: int, frame: Any) -> None:
        noted.append(signum)
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, handler)
    try:
        yield noted
    finally:
        if signal.getsignal(signal.SIGINT) is handler:  # not replaced since (by _aborted, say)
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _main(argv: list[str] | None, sigint: list[int]) -> None:
    try:
        code = cli.main(args=argv, prog_name="groundeval", standalone_mode=False)
        if isinstance(code, int) and code:  # ctx.exit(n) returns n in non-standalone mode
            sys.exit(code)
    except ContractError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:  # a path that cannot be read or written (read-only, a file where a folder goes, ...)
        where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f)
        click.echo(f"error: {where + ': ' if where else ''}{exc.strerror or exc}", err=True)
        sys.exit(2)
    except UnicodeDecodeError as exc:  # readers that locate it raise ContractError first; this is the net
        click.echo(
            f"error: an input file is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})",
            err=True,
        )
        sys.exit(2)
    except RecursionError:
        click.echo("error: an input nests too deeply to be read", err=True)
        sys.exit(2)
    except (click.exceptions.Abort, KeyboardInterrupt):
        _aborted()
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:
        if isinstance(exc, RuntimeError) and str(exc).startswith("Symlink loop from "):  # pathlib's resolve()
            click.echo(f"error: {str(exc)[len('Symlink loop from ') :]}: a symbolic link loop", err=True)
            sys.exit(2)
        if not (interrupted(exc) or sigint):
            raise
        _aborted()  # Ctrl-C inside a DuckDB query (e.g. while loading a pack), or turned into another error


def _aborted() -> None:
    """Exit 130 after Ctrl-C; a further SIGINT (pending, or a second Ctrl-C) during the
    cleanup is ignored rather than ending the process by the signal or with a traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo("aborted", err=True)
    sys.exit(130)


def entry() -> None:
    """The ``groundeval`` command (and ``python -m groundeval.cli.main``): :func:`main`, after
    which a Ctrl-C is ignored. The work is done and its exit code stands: a SIGINT arriving while
    the interpreter shuts down (whose default handler it would meet there) must not turn a
    finished run into a process killed by the signal."""
    import signal

    assert isinstance(cli, LazyGroup)
    cli.freeze_imports = True
    try:
        main()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    entry()
