"""The pytest gate never passes a broken run (issue 32): an agent that raises, or does nothing,
fails every item (question checks, thresholds, the baseline) unless the user allows it with
``--groundeval-allow-errors`` / ``--groundeval-allow-empty`` or ``[tool.groundeval]``."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TINY = Path(__file__).resolve().parents[2] / "domain_packs" / "tiny"

AGENTS = '''
from groundeval.agents.oracle import OracleAgent


class Raising:
    name = "raising"

    def run(self, episode):
        raise RuntimeError("the model server is on fire")


class Idle:
    name = "idle"

    def run(self, episode):
        return None


class SilenceRaises:
    """The oracle, except that it raises on every Silence question."""

    name = "silence-raises"

    def run(self, episode):
        if episode.question.track == "silence":
            raise RuntimeError("flaky provider")
        OracleAgent().run(episode)


def raising():
    return Raising()


def idle():
    return Idle()


def silence_raises():
    return SilenceRaises()
'''

PYPROJECT = """
[tool.pytest.ini_options]
addopts = "-p no:cacheprovider"

[tool.groundeval]
baseline = "ci/baseline.json"
min_adjusted = 0.0
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.makepyfile(gate_agents=AGENTS)
    pytester.syspathinsert()
    return pytester


def _gate(pytester: pytest.Pytester, agent: str, *extra: str) -> pytest.RunResult:
    return pytester.runpytest(f"--groundeval={TINY}", f"--groundeval-agent=gate_agents:{agent}", *extra)


def _outcomes(result: pytest.RunResult) -> dict[str, str]:
    return {r.nodeid: r.outcome for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"}


def test_an_agent_that_raises_fails_every_item(project, tiny_questions):
    silence = [q for q in tiny_questions if q.track == "silence"]
    result = _gate(project, "raising", "-k", "silence")
    result.assert_outcomes(failed=len(silence) + 1)  # every question and the track's threshold (0.0!)
    text = result.stdout.str()
    # one report per question; the short summary may repeat it (how much depends on the terminal's width)
    reports = text.split("short test summary info")[0]
    assert reports.count("FAILED episode_finished: the episode ended error: RuntimeError: the model server") == len(
        silence
    )
    assert "no silence threshold check on a broken run" in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow
def test_errors_pass_only_when_allowed(project, tiny_questions):
    silence = [q for q in tiny_questions if q.track == "silence"]
    allowed = _gate(project, "raising", "-k", "silence", "--groundeval-allow-errors")
    allowed.assert_outcomes(passed=len(silence) + 1)  # scored 0 each, and 0 >= the threshold 0.0
    project.makepyprojecttoml(PYPROJECT + "allow_errors = true\n")
    _gate(project, "raising", "-k", "silence").assert_outcomes(passed=len(silence) + 1)


def test_errors_on_one_track_fail_the_regression_check_and_are_never_recorded_as_the_baseline(project):
    result = _gate(project, "silence_raises", "-k", "no_regression", "--groundeval-update-baseline")
    result.assert_outcomes(failed=1)
    assert "no baseline is recorded on a broken run" in result.stdout.str()
    assert not (project.path / "ci" / "baseline.json").exists()


@pytest.mark.slow
def test_an_agent_that_does_nothing_fails_unless_empty_episodes_are_allowed(project, tiny_questions):
    silence = [q for q in tiny_questions if q.track == "silence"]
    result = _gate(project, "idle", "-k", "silence")
    result.assert_outcomes(failed=len(silence) + 1)
    assert "FAILED episode_finished: the agent made no search or fetch and gave no answer" in result.stdout.str()
    _gate(project, "idle", "-k", "silence", "--groundeval-allow-empty").assert_outcomes(passed=len(silence) + 1)
    # allowing errors does not allow empty episodes: they are another failure
    _gate(project, "idle", "-k", "silence", "--groundeval-allow-errors").assert_outcomes(failed=len(silence) + 1)


def test_a_bad_allow_setting_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makepyprojecttoml("[tool.groundeval]\nallow_errors = 1\n")
    result = pytester.runpytest(f"--groundeval={TINY}", "--groundeval-agent=oracle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "tool.groundeval.allow_errors" in result.stderr.str() and "expected true or false" in result.stderr.str()
