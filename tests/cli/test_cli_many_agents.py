"""Several agents in one invocation (issue 32 item 6): ``eval --agent A --agent B`` runs each on
the same questions in OUT/<agent>/, prints one comparison table and writes one comparison
(json, md, html) whose figures are each agent's own; a broken agent makes the command exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_run import cli


HERE = Path(__file__).resolve().parent


@pytest.mark.slow
def test_two_agents_one_comparison_with_each_agents_own_figures(tmp_path, capsys):
    out = tmp_path / "cmp"
    code, stdout, _ = cli(
        capsys, "eval", "tiny", "--agent", "oracle", "--agent", "keyword", "--out", str(out), "-q", "--track", "silence"
    )
    assert code == 0
    assert "agents compared" in stdout and "oracle" in stdout and "keyword" in stdout
    data = json.loads((out / "comparison.json").read_text())
    assert [a["agent"] for a in data["agents"]] == ["oracle", "keyword"]  # the order given
    for a in data["agents"]:
        report = json.loads((out / a["folder"] / "report.json").read_text())
        assert a["run_s_adj"] == report["overall"]["run_s_adj"] and a["n"] == report["overall"]["n"]
        scores = [json.loads(x) for x in (out / a["folder"] / "scores.jsonl").read_text().splitlines()]
        for s in scores:
            row = next(q for q in data["questions"] if q["question_id"] == s["question_id"])
            assert row["s_adj"][a["agent"]] == s["s_adj"]
    questions = [json.loads((out / f / "questions.json").read_text()) for f in ("oracle", "keyword")]
    assert questions[0] == questions[1]  # the same questions for both
    for row in data["questions"]:
        top = max(row["s_adj"].values())
        assert row["best"] == [a for a in ("oracle", "keyword") if row["s_adj"][a] == top]
    assert (out / "comparison.md").read_text().startswith("# Agents compared")
    assert 'href="oracle/report.html"' in (out / "comparison.html").read_text()


@pytest.mark.slow
def test_the_comparison_is_byte_identical_run_to_run(tmp_path, capsys):
    texts = []
    for name in ("a", "b"):
        args = ["eval", "tiny", "--agent", "lazy", "--agent", "oracle", "--out", str(tmp_path / name), "-q"]
        assert cli(capsys, *args, "--limit", "4")[0] == 0
        texts.append(
            [(tmp_path / name / f).read_bytes() for f in ("comparison.json", "comparison.md", "comparison.html")]
        )
    assert texts[0] == texts[1]


@pytest.mark.slow
def test_a_broken_agent_fails_the_command_but_the_others_are_reported(tmp_path, capsys):
    out = tmp_path / "cmp"
    code, stdout, err = cli(
        capsys, "eval", "tiny", "--agent", "cli_agents:always_fails", "--agent", "oracle", "--out", str(out), "-q"
    )
    assert code == 1 and "the run failed" in err
    data = json.loads((out / "comparison.json").read_text())
    broken, oracle = data["agents"]
    assert broken["errored_episodes"] == broken["n"] and broken["run_s_adj"] == 0.0
    assert oracle["run_s_adj"] == 1.0 and oracle["errored_episodes"] == 0


def test_run_with_two_agents_writes_one_folder_each_and_the_same_agent_twice_is_refused(tmp_path, capsys):
    out = tmp_path / "r"
    code, stdout, _ = cli(
        capsys, "run", "tiny", "--agent", "oracle", "--agent", "lazy", "--out", str(out), "-q", "--limit", "2"
    )
    assert code == 0 and stdout.count("2/2 episodes") == 2
    for agent in ("oracle", "lazy"):
        lines = (out / agent / "traces.jsonl").read_text().splitlines()
        assert len(lines) == 2 and all(json.loads(x)["agent"] == agent for x in lines)
    code, _, err = cli(capsys, "eval", "tiny", "--agent", "oracle", "--agent", "oracle", "--out", str(tmp_path / "x"))
    assert code == 2 and "'oracle' given twice" in err
