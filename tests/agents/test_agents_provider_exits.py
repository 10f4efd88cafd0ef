"""A provider that cannot be reached, or answers only errors, never ends in exit 0, and
the console names the real cause (connection refused vs HTTP status) — issue 17 items 3, 4, 10."""

from __future__ import annotations

import json
import subprocess
import sys


def test_unreachable_provider_exits_non_zero_with_the_cause(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundeval.cli.main",
            "eval",
            "tiny",
            "--agent",
            "openai:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--retries",
            "0",
            "--out",
            str(tmp_path / "o"),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "cannot connect to http://127.0.0.1:9/v1: connection refused" in proc.stderr
    assert "refused the request" not in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads((tmp_path / "o" / "run.json").read_text())["status"] == "aborted"


def test_provider_answering_errors_fails_the_run_and_names_the_http_status(tmp_path, scripted_server):
    # the server answers every request with HTTP 500 (its script is empty): reached, so not fatal,
    # but every episode errors -> failed
    code = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundeval.cli.main",
            "eval",
            "tiny",
            "--agent",
            "openai:m",
            "--base-url",
            scripted_server.url,
            "--retries",
            "0",
            "--out",
            str(tmp_path / "o"),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert code.returncode == 1, code.stderr
    assert f"HTTP 500 from {scripted_server.url}: script exhausted" in code.stderr
    assert "every episode errored" in code.stderr
