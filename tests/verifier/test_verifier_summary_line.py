"""The verdict line a terminal shows stays one line, however long the pack's path: CI logs
and scripts grep for ``<pack>: level N, E errors``."""

import io

from rich.console import Console

from groundeval.verifier.model import VerificationResult
from groundeval.verifier.output import render_table, summary_line


def test_the_verdict_is_one_line_on_a_narrow_terminal():
    result = VerificationResult(pack="/a/very/long/path/" + "nested/" * 20 + "pack", level=4)
    buffer = io.StringIO()
    render_table(result, Console(file=buffer, width=40, color_system=None))
    assert buffer.getvalue() == summary_line(result) + "\n"
    assert "level 4, 0 errors, 0 warnings, 0 infos" in buffer.getvalue()
