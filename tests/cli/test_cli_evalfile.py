"""The declarative eval file (issue 32 item 6): ``groundeval eval`` without PACK reads
``groundeval.toml`` (or ``[tool.groundeval]`` in ``pyproject.toml``): packs, agents, run
settings and thresholds; every pack x agent is run, compared and checked like ``gate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_run import cli

HERE = Path(__file__).resolve().parent


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(HERE))
    return tmp_path


@pytest.mark.slow
def test_the_file_runs_every_pack_and_agent_and_checks_its_thresholds(project, capsys):
    (project / "groundeval.toml").write_text(
        'packs = ["tiny"]\nagents = ["oracle", "lazy"]\nout = "results"\nmin_adjusted = 0.6\n'
        "[min_adjusted_by_track]\nsilence = 0.9\n"
    )
    code, out, err = cli(capsys, "eval", "-q", "--track", "silence")
    assert code == 1 and "eval file: 2 checks broke" in err
    assert "PASS  tiny · oracle · overall.min_adjusted" in out and "PASS  tiny · oracle · silence.min_adjusted" in out
    assert "FAIL  tiny · lazy · overall.min_adjusted" in out and "FAIL  tiny · lazy · silence.min_adjusted" in out
    data = json.loads((project / "results" / "tiny" / "comparison.json").read_text())
    assert [a["agent"] for a in data["agents"]] == ["oracle", "lazy"]
    lazy = json.loads((project / "results" / "tiny" / "lazy" / "report.json").read_text())
    assert f"run S_adj {lazy['overall']['run_s_adj']:.4f} < minimum 0.6000" in out


def test_pyproject_table_is_found_and_the_command_line_overrides_the_file(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.groundeval]\npack = "tiny"\nagent = "oracle"\ntrials = 1\nout = "o"\n'
        'baseline = "ci/b.json"\ntolerance = 0.05\n'  # the pytest gate's keys: left to it
    )
    code, out, _ = cli(capsys, "eval", "-q", "--limit", "2", "--trials", "2")
    assert code == 0
    traces = [json.loads(x) for x in (project / "o" / "tiny" / "oracle" / "traces.jsonl").read_text().splitlines()]
    assert sorted(t.get("trial", 0) for t in traces) == [0, 0, 1, 1]  # --trials 2 beat trials = 1


def test_an_errored_agent_fails_the_file(project, capsys):
    (project / "groundeval.toml").write_text('packs = ["tiny"]\nagents = ["cli_agents:always_fails"]\nout = "o"\n')
    code, out, _ = cli(capsys, "eval", "-q", "--limit", "2")
    assert code == 1 and "FAIL  tiny · cli_agents:always_fails · run.errored_episodes" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('packs = ["tiny"]\nagents = ["oracle"]\nmin_adjustd = 0.5\n', "field 'min_adjustd': unknown key"),
        ('packs = ["tiny"]\nagents = ["oracle"]\nmin_adjusted = 2\n', "field 'min_adjusted': expected a number"),
        ('agents = ["oracle"]\n', "field 'packs': the eval file names no pack"),
        ('packs = "tiny"\nagents = ["oracle"]\n', "field 'packs': expected a list"),
        ('packs = ["tiny"]\nagents = ["oracle"]\nmode = "telepathy"\n', "field 'mode': expected one of"),
        ("packs = [", "invalid TOML"),
    ],
)
def test_a_bad_file_is_one_located_error(project, capsys, text, message):
    (project / "groundeval.toml").write_text(text)
    code, _, err = cli(capsys, "eval")
    assert code == 2 and "groundeval.toml" in err and message in err and "Traceback" not in err


def test_no_pack_and_no_file_is_a_usage_error(project, capsys):
    code, _, err = cli(capsys, "eval", "--agent", "oracle")
    assert code == 2 and "groundeval.toml" in err
