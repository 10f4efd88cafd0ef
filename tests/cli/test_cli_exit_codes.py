"""Exit codes tell the truth (issue 17 item 4): a run whose every episode errored is
``failed`` and exits 1 with the cause on the console; a partly errored run completes with
a warning; ``gate`` enforces every option it is given or refuses the combination.
(Provider failures: tests/agents/test_agents_provider_exits.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_run import cli

from groundeval.cli.main import main

HERE = Path(__file__).resolve().parent


def test_every_episode_errored_is_a_failed_run(tmp_path, capsys):
    code, out, err = cli(
        capsys, "eval", "tiny", "--agent", "cli_agents:always_fails", "--out", str(tmp_path / "o"), "-q"
    )
    assert code == 1
    assert "error: the run failed: every episode errored (21 of 21)" in err
    assert "RuntimeError: the model server is on fire" in err and "Traceback" not in err
    info = json.loads((tmp_path / "o" / "run.json").read_text())
    assert info["status"] == "failed" and info["by_status"] == {"error": 21}
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["overall"]["compliance_tier"] == "no_evidence"  # no call was made: v = 0 proves nothing
    assert "no_evidence" in out


def test_run_command_exits_1_too(tmp_path, capsys):
    code, _, err = cli(capsys, "run", "tiny", "--agent", "cli_agents:always_fails", "--out", str(tmp_path / "o"), "-q")
    assert code == 1 and "the run failed" in err


def test_partly_errored_run_completes_with_a_warning(tmp_path, capsys):
    code, out, err = cli(
        capsys, "eval", "tiny", "--agent", "cli_agents:fails_first", "--out", str(tmp_path / "o"), "-q", "-j", "1"
    )
    assert code == 0
    assert "warning: 1 of 21 episodes errored; first: RuntimeError: flaky provider" in err
    info = json.loads((tmp_path / "o" / "run.json").read_text())
    assert info["status"] == "completed" and info["by_status"] == {"completed": 20, "error": 1}


# --------------------------------------------------------------------------- gate


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A clean run (oracle) and a regressed one (keyword) of the tiny pack."""
    root = tmp_path_factory.mktemp("gate")
    for name, agent in (("base", "oracle"), ("new", "keyword")):
        main(["eval", "tiny", "--agent", agent, "--out", str(root / name), "-q"])
    return root / "base", root / "new"


def test_baseline_alone_is_refused(two_runs, capsys):
    base, new = two_runs
    code, _, err = cli(capsys, "gate", str(new), "--baseline", str(base))
    assert code == 2 and "--baseline: needs --max-drop" in err
    code, _, err = cli(capsys, "gate", str(new), "--baseline", str(base), "--min-adjusted", "0")
    assert code == 2 and "needs --max-drop" in err  # another check given does not make the baseline optional


def test_baseline_with_max_drop_fails_a_regressed_run(two_runs, capsys):
    base, new = two_runs
    rb = json.loads((base / "report.json").read_text())["overall"]["run_s_adj"]
    rn = json.loads((new / "report.json").read_text())["overall"]["run_s_adj"]
    assert rb - rn > 0.1
    code, out, _ = cli(capsys, "gate", str(new), "--baseline", str(base), "--max-drop", "0.05")
    assert code == 1 and "FAIL  overall.max_drop" in out
    code, out, _ = cli(capsys, "gate", str(base), "--baseline", str(base), "--max-drop", "0")
    assert code == 0 and "PASS  overall.max_drop" in out


def test_a_ctrl_c_after_the_command_finished_leaves_its_exit_code():
    """The command's work done, a SIGINT (Ctrl-C pressed as it ends, or arriving while the
    interpreter shuts down, where Python has put back the default handler) neither kills the
    process by the signal nor raises: the exit code is the command's. CI saw ``info`` killed by
    SIGINT (-2) at its very end before ``entry`` ignored it."""
    import os
    import signal
    import subprocess
    import sys

    code = (
        "import os, signal, sys\n"
        "from groundeval.cli.main import entry\n"
        "sys.argv = ['groundeval', 'packs', '--json']\n"
        "try:\n"
        "    entry()\n"
        "finally:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    print('after', file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert done.returncode == 0, done.stderr
    assert "after" in done.stderr and "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN  # this process (pytest) keeps its Ctrl-C
