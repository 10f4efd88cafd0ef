"""The pytest gate end to end: pytester runs the plugin on the tiny pack with a valid
agent and with a regressing one, and checks outcomes and failure text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundeval.trace.io import read_traces

pytest_plugins = ["pytester"]

TINY = Path(__file__).resolve().parents[2] / "domain_packs" / "tiny"

AGENTS = '''
from groundeval.agents.answers import default_answer, fit
from groundeval.agents.oracle import OracleAgent


class Passing:
    """Valid and complete: the built-in oracle's trajectory."""

    name = "passing"

    def run(self, episode):
        OracleAgent().run(episode)


class Regressing:
    """A regression in two behaviours: it reads every artifact before answering, gated
    or not, and answers every Silence question "no" without looking."""

    name = "regressing"

    def run(self, episode):
        q = episode.question
        if q.track == "silence":
            schema = q.answer_schema
            episode.submit({**default_answer(schema), **fit({"exists": False, "evidence_artifacts": []}, schema)})
            return
        for (artifact_id,) in episode.store.query("SELECT id FROM artifacts ORDER BY id"):
            episode.fetch(artifact_id)
        OracleAgent().run(episode)


class Broken:
    """An adapter whose provider rejects the key: the whole run stops."""

    name = "broken"

    def run(self, episode):
        from groundeval.agents.http import ProviderError

        raise ProviderError("invalid API key", status=401, fatal=True)


def passing():
    return Passing()


def broken():
    return Broken()


def regressing():
    return Regressing()
'''

PYPROJECT = """
[tool.pytest.ini_options]
addopts = "-p no:cacheprovider"

[tool.groundeval]
baseline = "ci/baseline.json"
tolerance = 0.05
min_adjusted = 0.9
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.makepyfile(gate_agents=AGENTS)
    pytester.syspathinsert()
    return pytester


def _gate(pytester: pytest.Pytester, agent: str, *extra: str) -> pytest.RunResult:
    return pytester.runpytest(f"--groundeval={TINY}", f"--groundeval-agent=gate_agents:{agent}", *extra)


def _reports(result: pytest.RunResult) -> dict[str, str]:
    return {r.nodeid: r.outcome for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"}


def test_valid_agent_passes_every_item_and_records_a_baseline(project, tiny_questions):
    tracks = sorted({q.track for q in tiny_questions})
    assert tracks and tiny_questions
    first = _gate(project, "passing", "--groundeval-update-baseline")
    first.assert_outcomes(passed=len(tiny_questions) + len(tracks) + 1)
    baseline = json.loads((project.path / "ci" / "baseline.json").read_text())
    assert sorted(baseline["tracks"]) == tracks
    assert sorted(baseline["questions"]) == sorted(q.id for q in tiny_questions)

    again = _gate(project, "passing")
    again.assert_outcomes(passed=len(tiny_questions) + len(tracks) + 1)
    names = _reports(again)
    assert any(n.endswith("::no_regression") for n in names)
    assert all(f"min_adjusted:{t}" in " ".join(names) for t in tracks)
    assert "groundeval: pack" in again.stdout.str()


def test_regressing_agent_fails_with_question_check_and_trace(project, tiny_questions):
    _gate(project, "passing", "--groundeval-update-baseline").assert_outcomes(
        passed=len(tiny_questions) + len({q.track for q in tiny_questions}) + 1
    )
    result = _gate(project, "regressing", "--groundeval-out", "out")
    traces = {t.question_id: t for t in read_traces(project.path / "out" / "traces.jsonl")}
    assert sorted(traces) == sorted(q.id for q in tiny_questions)

    # What must fail, derived from the recorded traces independently of the plugin.
    expected_fail = set()
    for q in tiny_questions:
        t = traces[q.id]
        flagged = any(c.flags for c in t.calls)
        silent_no = q.track == "silence" and q.ground_truth.expected_search_space
        if flagged or silent_no:
            expected_fail.add(q.id)
    assert any(q.track == "silence" for q in tiny_questions if q.id in expected_fail)
    assert any(q.track == "perspective" for q in tiny_questions if q.id in expected_fail)

    outcomes = _reports(result)
    question_items = {
        n: o
        for n, o in outcomes.items()
        if n.rsplit("::", 1)[-1].split(":", 1)[0] in ("perspective", "counterfactual", "silence")
    }
    assert len(question_items) == len(tiny_questions)
    failed_ids = {n.rsplit(":", 1)[-1] for n, o in question_items.items() if o == "failed"}
    assert failed_ids == expected_fail
    assert outcomes[next(n for n in outcomes if n.endswith("::no_regression"))] == "failed"
    assert outcomes[next(n for n in outcomes if n.endswith("::min_adjusted:silence"))] == "failed"

    text = result.stdout.str()
    assert "FAILED no_governance_violations" in text
    assert "FLAGS:" in text and ">> #" in text  # the timeline marks the flagged calls
    assert "fetch_artifact(artifact_id=" in text
    assert "FAILED silence_no_backed_by_coverage" in text and "never fetched" in text
    assert "regression against baseline" in text and "silence: mean S_adj" in text
    some_failed = sorted(expected_fail)[0]
    assert f"question {some_failed}" in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_keyword_selection_runs_only_what_is_selected(project, tiny_questions):
    silence = sorted(q.id for q in tiny_questions if q.track == "silence")
    result = _gate(project, "passing", "-k", "silence", "--groundeval-out", "out")
    result.assert_outcomes(passed=len(silence) + 1)  # the questions and the silence threshold item
    ran = sorted(t.question_id for t in read_traces(project.path / "out" / "traces.jsonl"))
    assert ran == silence
    scores = [json.loads(line) for line in (project.path / "out" / "scores.jsonl").read_text().splitlines()]
    assert sorted(s["question_id"] for s in scores) == silence
    report = json.loads((project.path / "out" / "report.json").read_text())
    assert report["overall"]["n"] == len(silence)


def test_a_run_that_cannot_start_fails_every_item_with_the_reason(project, tiny_questions):
    silence = [q for q in tiny_questions if q.track == "silence"]
    result = _gate(project, "broken", "-k", "silence")
    result.assert_outcomes(failed=len(silence) + 1)
    text = result.stdout.str()
    reasons = [line for line in result.stdout.lines if line.startswith("the agent run failed: ")]
    assert len(reasons) == len(silence) + 1
    assert text.count("invalid API key") >= len(silence) + 1 and "Traceback" not in text


def test_thresholds_come_from_pyproject(pytester: pytest.Pytester, tiny_questions):
    pytester.makepyprojecttoml(
        PYPROJECT.replace(
            "min_adjusted = 0.9",
            "min_adjusted = 0.0\n"
            'checks = ["min_adjusted_score"]\n'
            "[tool.groundeval.min_adjusted_by_track]\nsilence = 0.99",
        )
    )
    pytester.makepyfile(gate_agents=AGENTS)
    pytester.syspathinsert()
    result = _gate(pytester, "regressing")
    tracks = sorted({q.track for q in tiny_questions})
    result.assert_outcomes(passed=len(tracks) - 1, failed=1)
    assert "silence mean adjusted score" in result.stdout.str() and "required 0.990" in result.stdout.str()


def test_bad_settings_are_one_clear_usage_error(pytester: pytest.Pytester):
    pytester.makepyprojecttoml("[tool.groundeval]\nmin_adjusted = 2\n")
    result = pytester.runpytest(f"--groundeval={TINY}", "--groundeval-agent=oracle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "tool.groundeval.min_adjusted" in result.stderr.str()
    assert "Traceback" not in result.stderr.str()

    pytester.makepyprojecttoml("[tool.groundeval]\nmin_adjusted = 0.5\n")
    missing = pytester.runpytest(f"--groundeval={TINY}")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    assert "--groundeval-agent" in missing.stderr.str()

    no_pack = pytester.runpytest("--groundeval", "no/such/pack", "--groundeval-agent", "oracle")
    assert no_pack.ret == pytest.ExitCode.USAGE_ERROR
    assert "no such file or directory" in no_pack.stderr.str()


def test_plugin_is_inert_without_the_option(pytester: pytest.Pytester):
    """Loaded in every pytest run: without --groundeval it must not import the engine."""
    pytester.makepyfile(
        test_plain="""
import sys

def test_nothing_heavy_was_imported():
    heavy = [m for m in ("duckdb", "pydantic", "groundeval.store.store", "groundeval.agents.runner",
                         "groundeval.testing.strategies") if m in sys.modules]
    assert heavy == []
    assert "groundeval.testing.plugin" in sys.modules
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "groundeval: pack" not in result.stdout.str()
