"""docs/testing.md stays true: its Python examples run, its CI snippets parse and
use options that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_doc_has_examples():
    assert len(_blocks("python")) >= 3
    assert len(_blocks("yaml")) == 2


@pytest.mark.parametrize("index", range(4))
def test_python_examples_run(index):
    blocks = _blocks("python")
    if index >= len(blocks):
        pytest.skip("fewer examples")
    exec(compile(blocks[index], f"{DOC}:python[{index}]", "exec"), {"__name__": "docs_example"})


def _gate_options() -> set[str]:
    import groundeval.testing.plugin as plugin

    names: set[str] = set()

    class Group:
        def addoption(self, *opts, **_kw):
            names.update(opts)

    class Parser:
        def getgroup(self, *_a, **_kw):
            return Group()

    plugin.pytest_addoption(Parser())
    return names


def _verify_options() -> set[str]:
    from groundeval.cli.verify import verify

    return {o for p in verify.params for o in getattr(p, "opts", [])}


def _check_command(cmd: str) -> None:
    words = shlex.split(cmd)
    if words[0] == "groundeval" and words[1] == "verify":
        known = _verify_options()
        used = {w.split("=")[0] for w in words if w.startswith("--")}
        assert used <= known, used - known
    elif words[0] == "pytest":
        used = {w.split("=")[0] for w in words if w.startswith("--groundeval")}
        assert used and used <= _gate_options(), used - _gate_options()
        assert "--groundeval" in used and "--groundeval-agent" in used


def test_github_workflow_runs_verify_then_the_gate():
    workflow = yaml.safe_load(_blocks("yaml")[0])
    steps = workflow["jobs"]["gate"]["steps"]
    runs = [" ".join(s["run"].split()) for s in steps if "run" in s]
    verify = next(i for i, r in enumerate(runs) if r.startswith("groundeval verify"))
    gate = next(i for i, r in enumerate(runs) if r.startswith("pytest"))
    assert verify < gate
    for cmd in (runs[verify], runs[gate]):
        _check_command(cmd)


def test_precommit_config_has_both_hooks():
    config = yaml.safe_load(_blocks("yaml")[1])
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert set(hooks) == {"groundeval-verify", "groundeval-gate"}
    for hook in hooks.values():
        assert hook["language"] == "system" and hook["pass_filenames"] is False
        _check_command(hook["entry"])


def test_documented_settings_parse(tmp_path: Path):
    from groundeval.testing.config import load_config

    toml = next(b for b in re.findall(r"```toml\n(.*?)```", DOC.read_text(), flags=re.S) if "[tool.groundeval]" in b)
    (tmp_path / "pyproject.toml").write_text(toml)
    cfg = load_config(tmp_path)
    assert cfg.threshold("silence") == 0.90 and cfg.threshold("perspective") == 0.80
