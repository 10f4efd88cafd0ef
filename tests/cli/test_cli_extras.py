"""A missing extra is one line naming the exact install command, exit 2, no traceback
(issue 17 item 3). The extra's modules are hidden in a subprocess (``sys.modules[name] = None``
makes any import of them fail, as on an install without the extra)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _cli_without(modules: list[str], args: list[str], cwd) -> subprocess.CompletedProcess:
    code = (
        "import sys\n"
        f"for m in {modules!r}:\n    sys.modules[m] = None\n"
        "from groundeval.cli.main import main\n"
        f"main({args!r})\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_llm_adapter_without_httpx(tmp_path, provider):
    proc = _cli_without(["httpx"], ["run", "tiny", "--agent", f"{provider}:some-model", "--out", "o", "-q"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: --agent {provider}:some-model: needs the '{provider}' extra (module 'httpx' is not installed): "
        f"pip install 'groundeval[{provider}]'"
    ]
    assert not (tmp_path / "o" / "traces.jsonl").exists()  # refused before any episode


@pytest.mark.parametrize("hidden, missing", [(["anyio"], "anyio"), (["mcp", "mcp.server"], "mcp")])
def test_serve_without_the_mcp_extra(tmp_path, hidden, missing):
    questions = tmp_path / "q.json"
    questions.write_text("{}")
    proc = _cli_without(hidden, ["serve", "tiny", "--questions", str(questions)], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: groundeval serve: needs the 'mcp' extra (module '{missing}' is not installed): "
        "pip install 'groundeval[mcp]'"
    ]
    assert "Traceback" not in proc.stdout + proc.stderr


def test_extras_table_matches_pyproject():
    import tomllib
    from pathlib import Path

    from groundeval.extras import EXTRAS

    declared = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert set(EXTRAS) <= set(declared["project"]["optional-dependencies"])
