"""Run the CLI in-process and capture how it ended (a module of its own, imported by name)."""

from __future__ import annotations

import pytest

from groundeval.cli.main import main


def run_cli(args: list[str], capsys, stream: str = "err") -> tuple[int, str]:
    """Exit code and the captured ``stream`` of a CLI run expected to exit."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    return exc.value.code, getattr(capsys.readouterr(), stream)
