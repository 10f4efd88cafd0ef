"""Starting a real ``groundeval serve`` process for the MCP tests (a module of its own so
tests import it by a unique name)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from groundeval.questions.model import QuestionSet, QuestionSetMeta


def write_questions(path: Path, questions, digest: str) -> Path:
    qs = QuestionSet(metadata=QuestionSetMeta(contract_digest=digest, pack="tiny", seed=0), questions=questions)
    path.write_text(qs.model_dump_json(), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_cmd(pack: Path, questions: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "groundeval.cli.main", "serve", str(pack), "--questions", str(questions), *extra]


def run_serve(pack: Path, questions: Path, *extra: str, env: dict | None = None, timeout: float = 120):
    """Run ``serve`` to completion (for start-up refusals): (exit code, stderr)."""
    proc = subprocess.run(
        serve_cmd(pack, questions, *extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )
    return proc.returncode, proc.stderr


@contextmanager
def http_server(pack: Path, questions: Path, *extra: str, env: dict | None = None):
    """A running HTTP server; yields (url, process). Stopped (SIGTERM) on exit."""
    port = free_port()
    proc = subprocess.Popen(
        serve_cmd(pack, questions, "--transport", "http", "--port", str(port), *extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
