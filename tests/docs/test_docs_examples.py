"""Docs that run (issue 17 item 11): every runnable code block of the README and ``docs/``
runs, in order, in a temporary folder per page; data blocks parse; Python blocks use no
undefined name. The convention is in ``docs_blocks.py`` and ``docs/README.md``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from docs_blocks import LANGUAGES, PAGES, PARSE, REPO, RUN, Block, blocks, undefined_names

ALL = [b for page in PAGES for b in blocks(page)]
TIMEOUT_S = 300


def _env(bin_dir: Path, cache: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    if cache is not None:
        env["GROUNDEVAL_CACHE_DIR"] = str(cache)  # serve's question cache stays in the page's folder
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    env["PYTHONHASHSEED"] = "0"
    return env


def _parse(block: Block) -> None:
    code = block.code
    if block.lang == "json":
        json.loads(code)
    elif block.lang == "jsonl":
        for i, line in enumerate(code.splitlines(), 1):
            if line.strip():
                try:
                    json.loads(line)
                except ValueError as exc:
                    raise AssertionError(f"{block.where}: line {i} of the block: {exc}") from None
    elif block.lang == "yaml":
        list(yaml.safe_load_all(code))
    elif block.lang == "toml":
        tomllib.loads(code)


def _execute(block: Block, cwd: Path, env: dict[str, str], index: int) -> None:
    if block.lang == "python":
        script = cwd / f".doc_block_{index}.py"
        script.write_text(block.code, encoding="utf-8")
        args = [sys.executable, script.name]
    else:
        args = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        pytest.fail(
            f"{block.where} ({block.lang}) exited {proc.returncode}\n--- block\n{block.code}"
            f"--- stdout (tail)\n{proc.stdout[-3000:]}\n--- stderr (tail)\n{proc.stderr[-3000:]}",
            pytrace=False,
        )


@pytest.mark.slow  # ~2 min of CPU in all: in CI's slow step (-m slow), not the default run
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_page_examples_run(page: Path, tmp_path: Path):
    """Run the page's blocks in order in one folder, as a reader would paste them."""
    bin_dir = Path(sys.executable).parent
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)  # for `.venv/bin/groundeval`
    env = _env(bin_dir, tmp_path / ".cache")
    for i, block in enumerate(blocks(page)):
        if block.directive == "not-run":
            continue
        if block.directive == "file":
            target = tmp_path / block.argument
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
            if block.lang in PARSE:
                _parse(block)
            continue
        if block.lang in PARSE:
            _parse(block)
        elif block.lang in RUN:
            _execute(block, tmp_path, env, i)


def test_the_convention_is_followed():
    problems = []
    for b in ALL:
        if b.lang not in LANGUAGES:
            problems.append(
                f"{b.where}: unknown block language {b.lang!r} (use one of {', '.join(filter(None, LANGUAGES))}"
                " or none)"
            )
        if b.directive == "not-run" and len(b.argument) < 8:
            problems.append(f"{b.where}: <!-- not-run: ... --> needs a reason")
        if b.directive == "file" and (
            not b.argument or Path(b.argument).is_absolute() or ".." in Path(b.argument).parts
        ):
            problems.append(f"{b.where}: <!-- file: ... --> needs a relative path inside the page's folder")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "python"], ids=lambda b: b.where)
def test_python_blocks_compile_and_define_every_name(block: Block):
    try:
        compile(block.code, block.where, "exec")
    except SyntaxError as exc:
        pytest.fail(f"{block.where}: {exc.msg} (block line {exc.lineno})", pytrace=False)
    assert undefined_names(block.code) == [], f"{block.where}: undefined names"


def test_most_blocks_run():
    """Skipping is the exception: a reader can paste what the docs show."""
    runnable = [b for b in ALL if b.lang in RUN]
    skipped = [b for b in runnable if b.directive == "not-run"]
    assert len(runnable) >= 20 and len(skipped) <= len(runnable) // 2, [b.where for b in skipped]


def test_the_harness_detects_failures(tmp_path: Path):
    """The checks can fail: an undefined name, a top-level ``async with`` and a failing command."""
    assert undefined_names("print(question)\n") == ["question"]
    assert undefined_names("def f():\n    return qid\n") == ["qid"]
    assert undefined_names("import json\nx = 1\ndef f(a):\n    return json.dumps([a, x, len])\n") == []
    with pytest.raises(SyntaxError):
        compile("async with x as y:\n    pass\n", "<doc>", "exec")
    page = tmp_path / "page.md"
    page.write_text("<!-- file: m.py -->\n```python\nVALUE = 3\n```\n\n```bash\ngroundeval info no-such-pack\n```\n")
    found = blocks(page)
    assert [(b.lang, b.directive, b.argument) for b in found] == [("python", "file", "m.py"), ("bash", None, "")]
    with pytest.raises(pytest.fail.Exception, match="exited 2"):
        _execute(found[1], tmp_path, _env(Path(sys.executable).parent), 1)
