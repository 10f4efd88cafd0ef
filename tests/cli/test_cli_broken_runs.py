"""Nothing reports success on a broken run (issue 32 items 1-2): ``eval`` and ``gate`` through the
CLI with real agents that raise or do nothing. The gate fails a run with an errored or empty
episode, a run whose run.json says failed, and a violation-rate check with nothing to judge —
unless the user allows it explicitly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_run import cli

from groundeval.cli.main import main

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One eval of the tiny pack per kind of agent: every episode raises, the first raises,
    none does anything, and the oracle answering zero-shot (no tool to call)."""
    import sys

    sys.path.insert(0, str(HERE))
    root = tmp_path_factory.mktemp("broken")
    for name, args in (
        ("failed", ["--agent", "cli_agents:always_fails"]),
        ("partly", ["--agent", "cli_agents:fails_first", "-j", "1"]),
        ("idle", ["--agent", "cli_idle_agents:idle"]),
        ("zeroshot", ["--agent", "oracle", "--mode", "zero-shot"]),
    ):
        try:
            main(["eval", "tiny", *args, "--out", str(root / name), "-q"])
        except SystemExit:
            pass
    sys.path.remove(str(HERE))
    return root


def _scores(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "scores.jsonl").read_text().splitlines()]


def test_errored_episodes_score_zero_and_the_report_counts_them(runs):
    failed = _scores(runs / "failed")
    assert failed and all(s["s_adj"] == s["s_answer"] == s["s_traj"] == 0.0 for s in failed)
    assert all("errored" in s["failures"] for s in failed)
    partly = _scores(runs / "partly")
    errored = [s for s in partly if "errored" in s["failures"]]
    assert len(errored) == 1 and errored[0]["s_adj"] == 0.0
    assert any(s["s_adj"] > 0 for s in partly)
    assert json.loads((runs / "partly" / "report.json").read_text())["errored_episodes"] == 1


def test_an_agent_that_does_nothing_scores_zero_and_eval_exits_1(runs, tmp_path, capsys):
    idle = _scores(runs / "idle")
    assert idle and all(s["s_adj"] == 0.0 and "empty" in s["failures"] for s in idle)
    code, out, err = cli(capsys, "eval", "tiny", "--agent", "cli_idle_agents:idle", "--out", str(tmp_path / "o"), "-q")
    assert code == 1
    assert f"nothing was measured: {len(idle)} of {len(idle)} episodes are empty" in err
    assert "no_evidence" in out


def test_gate_fails_a_failed_run_whatever_its_threshold(runs, capsys):
    code, out, err = cli(capsys, "gate", str(runs / "failed"), "--min-adjusted", "0")
    assert code == 1 and "gate passed" not in out
    assert "FAIL  run.status: the run did not complete (run.json: failed: every episode errored" in out
    assert "FAIL  run.errored_episodes: 21 of 21 episodes errored" in out
    assert "gate failed" in err


@pytest.mark.parametrize("target", ["folder", "scores.jsonl", "report.json"])
def test_gate_fails_a_partly_errored_run_unless_errors_are_allowed(runs, target, capsys):
    path = runs / "partly" if target == "folder" else runs / "partly" / target
    code, out, _ = cli(capsys, "gate", str(path), "--min-adjusted", "0")
    assert code == 1 and "gate passed" not in out
    assert "FAIL  run.errored_episodes: 1 of 21 episodes errored" in out and "--allow-errors accepts it" in out
    code, out, _ = cli(capsys, "gate", str(path), "--min-adjusted", "0", "--allow-errors")
    assert code == 0 and "PASS  run.errored_episodes" in out and "(allowed by --allow-errors)" in out


def test_gate_fails_empty_episodes_unless_allowed(runs, capsys):
    code, out, _ = cli(capsys, "gate", str(runs / "idle"), "--min-adjusted", "0")
    assert code == 1 and "FAIL  run.empty_episodes: 21 of 21 episodes are empty" in out
    code, out, _ = cli(capsys, "gate", str(runs / "idle"), "--min-adjusted", "0", "--allow-empty")
    assert code == 0 and "gate passed" in out


def test_a_violation_rate_with_nothing_to_judge_fails_unless_allowed(runs, tmp_path, capsys):
    # zero-shot: the oracle answers every question (a clean run), but makes no tool call to judge
    report = json.loads((runs / "zeroshot" / "report.json").read_text())
    assert report["overall"]["compliance_tier"] == "no_evidence" and report["overall"]["accuracy"] == 1.0
    code, out, _ = cli(capsys, "gate", str(runs / "zeroshot"), "--max-violation-rate", "0")
    assert code == 1 and "FAIL  overall.max_violation_rate: nothing to judge" in out
    code, out, _ = cli(capsys, "gate", str(runs / "zeroshot"), "--max-violation-rate", "0", "--allow-empty")
    assert code == 0
    code, out, _ = cli(capsys, "gate", str(runs / "zeroshot"), "--min-adjusted", "0")
    assert code == 0 and "run." not in out  # a clean run gets no integrity check lines


def test_gate_reads_the_run_status_beside_a_clean_report(runs, tmp_path, capsys):
    """A run.json that says the run did not finish fails the gate even when every score is clean."""
    folder = tmp_path / "copy"
    shutil.copytree(runs / "zeroshot", folder)
    info = json.loads((folder / "run.json").read_text())
    info["status"] = "interrupted"
    (folder / "run.json").write_text(json.dumps(info))
    code, out, _ = cli(capsys, "gate", str(folder), "--min-adjusted", "0")
    assert code == 1 and "FAIL  run.status: the run did not complete (run.json: interrupted" in out
    code, out, _ = cli(capsys, "gate", str(folder / "report.json"), "--min-adjusted", "0", "--allow-errors")
    assert code == 0 and "PASS  run.status" in out


def test_run_of_an_agent_that_does_nothing_exits_1_too(tmp_path, capsys):
    code, out, err = cli(capsys, "run", "tiny", "--agent", "cli_idle_agents:idle", "--out", str(tmp_path / "o"), "-q")
    assert code == 1 and "nothing was measured" in err and "are empty" in err
    code, out, err = cli(
        capsys, "run", "tiny", "--agent", "oracle", "--out", str(tmp_path / "p"), "-q", "--mode", "zero-shot"
    )
    assert code == 0 and "empty" not in err  # zero-shot answers are not empty episodes
