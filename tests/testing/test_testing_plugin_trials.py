"""The pytest gate with ``--groundeval-trials`` and ``--groundeval-profile``, as ``groundeval
run --trials`` and ``score --profile``: every property must hold in every trial (a failure
names its trial), thresholds and the baseline use the mean over trials, and the scores and
report follow the profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundeval.trace.io import read_traces

pytest_plugins = ["pytester"]

TINY = Path(__file__).resolve().parents[2] / "domain_packs" / "tiny"

AGENTS = '''
from groundeval.agents.oracle import OracleAgent


class SometimesLeaky:
    """The oracle, except that in trial 1 it first reads every artifact, gated or not."""

    name = "sometimes-leaky"

    def run(self, episode):
        if episode.trial == 1:
            for (artifact_id,) in episode.store.query("SELECT id FROM artifacts ORDER BY id"):
                episode.fetch(artifact_id)
        OracleAgent().run(episode)


def sometimes_leaky():
    return SometimesLeaky()
'''

PYPROJECT = """
[tool.pytest.ini_options]
addopts = "-p no:cacheprovider"

[tool.groundeval]
min_adjusted = 0.0
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.makepyfile(gate_agents=AGENTS)
    pytester.syspathinsert()
    return pytester


def _outcomes(result: pytest.RunResult) -> dict[str, str]:
    return {
        r.nodeid.rsplit(":", 1)[-1]: r.outcome
        for r in result.reprec.getreports("pytest_runtest_logreport")
        if r.when == "call"
    }


def test_every_trial_must_hold_and_a_failure_names_its_trial(project, tiny_questions):
    perspective = [q for q in tiny_questions if q.track == "perspective"]
    result = project.runpytest(
        f"--groundeval={TINY}",
        "--groundeval-agent=gate_agents:sometimes_leaky",
        "--groundeval-trials",
        "2",
        "-k",
        "perspective",
        "--groundeval-out",
        "out",
    )
    traces = read_traces(project.path / "out" / "traces.jsonl")
    assert sorted((t.question_id, t.trial) for t in traces) == sorted((q.id, k) for q in perspective for k in (0, 1))
    # derived from the traces, not from the plugin: a question fails when its trial 1 broke a gate
    leaked = {t.question_id for t in traces if any(c.flags for c in t.calls)}
    assert leaked and {t.trial for t in traces if t.question_id in leaked and any(c.flags for c in t.calls)} == {1}
    outcomes = _outcomes(result)
    assert {qid for qid, o in outcomes.items() if o == "failed"} == leaked
    assert outcomes["perspective"] == "passed"  # min_adjusted 0.0: the mean over both trials
    text = result.stdout.str()
    assert "2 trials" in text  # the header
    assert "(perspective/" in text and ", trial 1) failed" in text and ", trial 0) failed" not in text
    report = json.loads((project.path / "out" / "report.json").read_text())
    assert report["trials"]["trials"] == 2


def test_the_profile_scores_the_gate(project, tiny_questions):
    silence = [q for q in tiny_questions if q.track == "silence"]
    result = project.runpytest(
        f"--groundeval={TINY}",
        "--groundeval-agent=oracle",
        "--groundeval-profile",
        "paper",
        "-k",
        "silence",
        "--groundeval-out",
        "out",
    )
    result.assert_outcomes(passed=len(silence) + 1)
    assert "profile paper" in result.stdout.str()
    report = json.loads((project.path / "out" / "report.json").read_text())
    assert report["profile"] == "paper"


@pytest.mark.parametrize("setting, key", [("trials = 0", "trials"), ('profile = "fancy"', "profile")])
def test_bad_trials_or_profile_is_a_located_usage_error(pytester: pytest.Pytester, setting, key):
    pytester.makepyprojecttoml(f"[tool.groundeval]\n{setting}\n")
    result = pytester.runpytest(f"--groundeval={TINY}", "--groundeval-agent=oracle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"tool.groundeval.{key}" in result.stderr.str() and "Traceback" not in result.stderr.str()
