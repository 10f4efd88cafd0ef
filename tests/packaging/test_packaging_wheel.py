"""What a pip user gets (issue 17 items 1 and 2): the sdist holds everything the wheel needs,
the wheel built from it ships the bundled packs and the LICENSE, installs ``groundeval``
as its only top-level import name, and the README quick start runs from it.

The sdist and wheel are built offline from a copy of the sources with the PEP 517 hooks of
the installed setuptools (the dev extra pins a recent one), installed with ``--no-deps``
into a fresh venv; the dependencies come from this environment's site-packages through a
``.pth`` file appended after the venv's own, so groundeval itself can only come from the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "groundeval", "verifier", "domain_packs")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.duckdb", "*.duckdb.wal")

pytestmark = pytest.mark.slow  # ~15-25 s: two builds, a venv and an eval of the tiny pack


def _run(args: list, cwd: Path, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{args}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _hook(hook: str, src: Path, out: Path) -> Path:
    code = f"from setuptools import build_meta as b; print(b.{hook}({str(out)!r}))"
    name = _run([sys.executable, "-c", code], src).stdout.strip().splitlines()[-1]
    return out / name


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(sdist, wheel built from the extracted sdist, seconds)."""
    start = time.monotonic()
    root = tmp_path_factory.mktemp("dist")
    src = root / "src"
    src.mkdir()
    for name in SOURCES:
        p = REPO / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=IGNORE)
        else:
            shutil.copy2(p, src / name)
    sdist = _hook("build_sdist", src, root)
    with tarfile.open(sdist) as tar:
        tar.extractall(root / "unpacked", filter="data")
    (unpacked,) = (root / "unpacked").iterdir()
    wheel = _hook("build_wheel", unpacked, root)
    return sdist, wheel, time.monotonic() - start


@pytest.fixture(scope="module")
def venv(built, tmp_path_factory):
    _, wheel, _ = built
    env_dir = tmp_path_factory.mktemp("venv") / "v"
    _run([sys.executable, "-m", "venv", "--without-pip", env_dir], env_dir.parent)
    py = env_dir / "bin" / "python"
    _run(
        [sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-deps", "--no-index", wheel],
        env_dir.parent,
    )
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env_dir).stdout.strip())
    (site / "zz_groundeval_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env_dir


def test_wheel_contents(built):
    sdist, wheel, seconds = built
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"groundeval", "groundeval-0.1.0.dist-info"}
    assert "groundeval/verifier/__init__.py" in names and "groundeval/verifier/rules/shape.py" in names
    assert not any(n.startswith("verifier/") for n in names)
    packs = sorted(
        p.parent.name for p in (REPO / "domain_packs").glob("*/groundeval.yaml") if not p.parent.name.startswith("_")
    )
    for pack in packs:
        shipped = sorted(
            n[len(f"groundeval/domain_packs/{pack}/") :]
            for n in names
            if n.startswith(f"groundeval/domain_packs/{pack}/")
        )
        on_disk = sorted(
            str(f.relative_to(REPO / "domain_packs" / pack))
            for f in (REPO / "domain_packs" / pack).rglob("*")
            if f.is_file() and "__pycache__" not in f.parts
        )
        assert shipped == on_disk, pack
    assert not any("/_build/" in n for n in names)
    license_files = [n for n in names if n.startswith("groundeval-0.1.0.dist-info/") and "LICENSE" in n]
    assert license_files
    text = zipfile.ZipFile(wheel).read(license_files[0]).decode()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    metadata = zipfile.ZipFile(wheel).read("groundeval-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert any(m.endswith("/LICENSE") for m in members)
    print(
        f"\nsdist {sdist.stat().st_size / 1e3:.0f} kB, wheel {wheel.stat().st_size / 1e3:.0f} kB, "
        f"built in {seconds:.1f} s"
    )


def test_quick_start_from_the_wheel(venv, tmp_path):
    """The README quick start for pip users: groundeval packs; groundeval eval tiny."""
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    listed = _run([bin_dir / "groundeval", "packs"], tmp_path, env=env).stdout
    assert "tiny" in listed and "finance" in listed
    done = _run([bin_dir / "groundeval", "eval", "tiny", "--agent", "oracle", "--out", "out"], tmp_path, env=env)
    report = (tmp_path / "out" / "report.json").read_text()
    assert '"run_s_adj": 1.0' in report and "perfect" in done.stdout


def test_only_groundeval_is_importable(venv, tmp_path):
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    bare = subprocess.run([py, "-c", "import verifier"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert bare.returncode != 0 and "No module named 'verifier'" in bare.stderr
    code = (
        "import groundeval, groundeval.verifier as v\n"
        "from groundeval.contract.packs import bundled_packs\n"
        "print(v.__file__); print(bundled_packs()['tiny'])"
    )
    where = _run([py, "-c", code], tmp_path, env=env).stdout.split()
    site = str(venv.resolve())
    assert all(str(Path(w).resolve()).startswith(site) for w in where), where  # from the wheel, not the clone


def test_sarif_help_uri_comes_from_the_wheel_metadata(built, venv, tmp_path):
    """The verifier's SARIF ``helpUri`` is the repository named in ``[project.urls]``: read
    from the installed wheel's metadata (no source tree next to it), not a constant."""
    import tomllib

    repository = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    metadata = zipfile.ZipFile(built[1]).read("groundeval-0.1.0.dist-info/METADATA").decode()
    assert f"Project-URL: Repository, {repository}" in metadata
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = (
        "from groundeval.verifier import output as o\n"
        "from pathlib import Path\n"
        "assert not (Path(o.__file__).resolve().parents[1] / 'pyproject.toml').exists()\n"
        "print(o.docs_uri('GE101'))"
    )
    out = _run([venv / "bin" / "python", "-c", code], tmp_path, env=env).stdout.strip()
    assert out == f"{repository}/blob/main/docs/verifier.md#ge101"
