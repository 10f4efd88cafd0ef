"""One import namespace: the folder ``verifier/`` installs as ``groundeval.verifier``, nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_groundeval_verifier_is_the_verifier_folder():
    import groundeval.verifier as gv

    assert Path(gv.__file__).resolve() == REPO / "verifier" / "__init__.py"
    assert gv.verify.__module__ == "groundeval.verifier.engine"


def test_top_level_verifier_is_not_importable_outside_the_repository(tmp_path):
    bare = _run("import verifier", tmp_path)
    assert bare.returncode != 0 and "No module named 'verifier'" in bare.stderr
    ok = _run("import groundeval.verifier, sys; print(groundeval.verifier.__name__)", tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "groundeval.verifier"


def test_groundeval_never_imports_the_top_level_name(tmp_path):
    # From the repository root the folder *is* importable as `verifier` (cwd is on sys.path), so
    # this catches any leftover `import verifier` in the package: verifying and the CLI must not load it.
    code = (
        "import sys, groundeval.api as api\n"
        "from groundeval.cli.main import main\n"
        "api.verify_pack('domain_packs/tiny', level=2)\n"
        "print(sorted(m for m in sys.modules if m == 'verifier' or m.startswith('verifier.')))"
    )
    done = _run(code, REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_test_session_refuses_the_top_level_name():
    # tests/conftest.py blocks `import verifier`, so no test passes by importing what pip users lack.
    with pytest.raises(ImportError, match="groundeval.verifier"):
        import verifier  # noqa: F401
    assert "verifier" not in sys.modules
