"""Run the CLI in-process and capture how it ended: `from cli_run import cli` in any test (this
folder is on `sys.path` through its conftest.py, as pytest puts it there)."""

from __future__ import annotations

from groundeval.cli.main import main


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``groundeval ARGS`` run in this process."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err
