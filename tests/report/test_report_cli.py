"""`groundeval score | report | compare | gate` end to end on saved files (no agent)."""

from __future__ import annotations

import json
import subprocess
import sys
from xml.etree import ElementTree as ET

import pytest
from report_fixtures import write_run

from groundeval.cli.main import main


def run(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "groundeval.cli.main", *args], capture_output=True, text=True, timeout=120
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = write_run(tmp_path_factory.mktemp("base"), good=True)
    new = write_run(tmp_path_factory.mktemp("new"), good=False)
    for folder in (base, new):
        main(
            ["score", str(folder / "traces.jsonl"), "--questions", str(folder / "questions.json"), "--bootstrap", "50"]
        )
    return base, new


def test_score_writes_scores_and_reports(runs):
    base, _ = runs
    lines = (base / "scores.jsonl").read_text().splitlines()
    assert len(lines) == 5 and all(json.loads(x)["s_adj"] == 1.0 for x in lines)
    report = json.loads((base / "report.json").read_text())
    assert report["overall"]["run_s_adj"] == 1.0 and report["overall"]["compliance_tier"] == "perfect"
    assert (base / "report.html").stat().st_size > 0 and (base / "report.md").exists()


def test_rescoring_is_byte_identical(runs, tmp_path):
    base, _ = runs
    code, out, err = run(
        "score",
        str(base / "traces.jsonl"),
        "-q",
        str(base / "questions.json"),
        "--out",
        str(tmp_path),
        "--bootstrap",
        "50",
    )
    assert code == 0, err
    for name in ("scores.jsonl", "report.json", "report.md", "report.html"):
        assert (tmp_path / name).read_bytes() == (base / name).read_bytes(), name


def test_report_command_from_folder(runs, tmp_path):
    _, new = runs
    code, out, err = run("report", str(new), "--out", str(tmp_path), "--bootstrap", "50", "--seed", "7")
    assert code == 0, err
    assert json.loads((tmp_path / "report.json").read_text()) == json.loads((new / "report.json").read_text())
    assert "narration for p3" in (tmp_path / "report.html").read_text()


def test_compare_lists_newly_failing_and_new_violations(runs):
    base, new = runs
    code, out, err = run("compare", str(base), str(new), "--json")
    assert code == 0, err
    diff = json.loads(out)
    assert [r["question_id"] for r in diff["newly_failing"]] == ["p3", "s1"]
    assert diff["fixed"] == []
    assert diff["new_violations"] == [{"question_id": "p3", "track": "perspective", "added": {"subsystem": 1}}]
    assert diff["tracks"]["silence"]["run_s_adj"][2] < 0
    code, text, _ = run("compare", str(new), str(base))
    assert "fixed: 2" in text and "newly failing: 0" in text


def test_gate_passes_and_fails_with_junit(runs, tmp_path):
    base, new = runs
    code, out, err = run("gate", str(base), "--min-adjusted", "0.9", "--max-violation-rate", "0")
    assert code == 0 and "gate passed" in out
    junit = tmp_path / "gate.xml"
    code, out, err = run(
        "gate",
        str(new),
        "--baseline",
        str(base),
        "--min-adjusted",
        "0.9",
        "--max-violation-rate",
        "0.01",
        "--max-drop",
        "0.05",
        "--test",
        "point",
        "--junit",
        str(junit),
    )
    assert code == 1
    assert "FAIL  overall.min_adjusted" in out and "FAIL  overall.max_violation_rate" in out
    assert "FAIL  silence.max_drop" in out and "PASS  counterfactual.max_drop" in out
    assert "gate failed" in err and "Traceback" not in err
    suite = ET.parse(junit).getroot().find("testsuite")
    failed = sorted(c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None)
    assert failed == [
        "overall.max_drop",
        "overall.max_violation_rate",
        "overall.min_adjusted",
        "perspective.max_drop",
        "silence.max_drop",
    ]
    # the default paired test: two questions per track cannot show a significant drop
    code, out, err = run("gate", str(new), "--baseline", str(base), "--max-drop", "0.05")
    assert code == 0 and "PASS  silence.max_drop" in out and "not significant" in out


def test_gate_accepts_report_json(runs):
    base, _ = runs
    code, out, _ = run("gate", str(base / "report.json"), "--min-adjusted", "1.0")
    assert code == 0


def test_bad_input_is_one_clear_message(runs, tmp_path):
    base, _ = runs
    bad = tmp_path / "traces.jsonl"
    lines = (base / "traces.jsonl").read_text().splitlines()
    bad.write_text(lines[0] + "\n" + '{"question_id": 3}\n')
    code, out, err = run("score", str(bad), "-q", str(base / "questions.json"), "--out", str(tmp_path))
    assert code == 2 and f"{bad}:2" in err and "Traceback" not in err
    code, _, err = run("gate", str(base), "--max-drop", "0.1")
    assert code == 2 and "--baseline" in err
    code, _, err = run("compare", str(base / "report.json"), str(base))
    assert code == 2 and "per-question scores" in err
