"""The gate's checks, baselines and settings, driven by the project's own strategies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.errors import ContractError
from groundeval.scoring.score import score
from groundeval.testing import strategies as S
from groundeval.testing.baseline import Baseline, compare, read_baseline, summarize, write_baseline
from groundeval.testing.checks import (
    fetched_ids,
    no_governance_violations,
    no_state_invalid_correct,
    silence_no_backed_by_coverage,
    trace_excerpt,
)
from groundeval.testing.config import ALL_CHECKS, GateConfig, load_config, parse_table

FAST = settings(max_examples=80, deadline=None)


@FAST
@given(st.data())
def test_governance_check_fails_exactly_on_flagged_calls_or_citations(data):
    q = data.draw(S.questions())
    trace = data.draw(S.traces(question=q))
    result = no_governance_violations(q, trace)
    flagged = [c.index for c in trace.calls if c.flags]
    final = next((s for s in reversed(trace.submissions) if s.valid), None)
    bad_citations = bool(final and any(final.citation_flags.values()))
    assert result.passed == (not flagged and not bad_citations)
    assert list(result.call_indices) == flagged
    for index in flagged[:5]:
        assert f"#{index} " in result.detail


@FAST
@given(st.data())
def test_silence_check_fails_exactly_on_an_unbacked_no(data):
    q = data.draw(S.questions(track="silence"))
    trace = data.draw(S.traces(question=q))
    result = silence_no_backed_by_coverage(q, trace)
    said_no = isinstance(trace.final_answer, dict) and trace.final_answer.get("exists") is False
    covered = set(q.ground_truth.expected_search_space) <= set(fetched_ids(trace))
    assert result.passed == (not said_no or covered)
    if not result.passed:
        missing = sorted(set(q.ground_truth.expected_search_space) - set(fetched_ids(trace)))
        assert all(m in result.detail for m in missing)


@FAST
@given(st.data())
def test_state_check_follows_the_scorer(data):
    q = data.draw(S.questions())
    trace = data.draw(S.traces(question=q))
    s = score(q, trace)
    assert no_state_invalid_correct(q, trace, s).passed == (not s.state_invalid_correct)


@FAST
@given(st.data())
def test_excerpt_shows_every_flagged_call_and_the_ends(data):
    q = data.draw(S.questions())
    trace = data.draw(S.traces(question=q))
    limit = data.draw(st.integers(2, 10))
    text = trace_excerpt(trace, limit=limit)
    lines = text.splitlines()
    for c in trace.calls:
        if c.flags:
            assert any(line.startswith(f">> #{c.index} ") and "FLAGS: " + ", ".join(c.flags) in line for line in lines)
    if trace.calls:
        assert f"#{trace.calls[-1].index} " in text and f"#{trace.calls[0].index} " in text
    shown = sum(1 for line in lines if line.lstrip(">").lstrip().startswith("#"))
    elided = sum(int(line.split()[1]) for line in lines if line.strip().startswith("...") and "calls" in line)
    assert shown + elided == len(trace.calls)
    assert lines[-1].strip().startswith(f"status: {trace.status}")


def test_a_silence_no_with_full_coverage_passes():
    @settings(max_examples=30, deadline=None)
    @given(S.questions(track="silence"))
    def check(q):
        from groundeval.trace.model import Submission, ToolCall, Trace

        space = q.ground_truth.expected_search_space
        calls = [
            ToolCall(index=i, tool="fetch_artifact", arguments={"artifact_id": a}, status="ok", result_ids=[a])
            for i, a in enumerate(space)
        ]
        answer = {"exists": False}
        calls.append(ToolCall(index=len(calls), tool="submit_answer", arguments={"answer": answer}, status="ok"))
        trace = Trace(
            question_id=q.id,
            track=q.track,
            mode="tool",
            actor=None,
            as_of=q.as_of,
            contract_digest="d",
            calls=calls,
            submissions=[Submission(call_index=len(calls) - 1, answer=answer, valid=True)],
            final_answer=answer,
            status="completed",
        )
        assert silence_no_backed_by_coverage(q, trace).passed
        short = trace.model_copy(update={"calls": calls[1:]})
        assert not silence_no_backed_by_coverage(q, short).passed
        # context mode: what counts is the window the agent was shown, not fetches
        shown = trace.model_copy(update={"mode": "context", "calls": calls[-1:], "context_ids": list(space)})
        assert silence_no_backed_by_coverage(q, shown).passed
        partial = shown.model_copy(update={"context_ids": list(space[1:])})
        result = silence_no_backed_by_coverage(q, partial)
        assert not result.passed and space[0] in result.detail and "never shown" in result.detail

    check()


# --------------------------------------------------------------------------- baselines


@FAST
@given(st.data())
def test_baseline_round_trips_and_compares_against_itself(data):
    pairs = []
    for _ in range(data.draw(st.integers(1, 6))):
        q = data.draw(S.questions())
        pairs.append(score(q, data.draw(S.traces(question=q))))
    base = summarize(pairs, contract_digest="abc", agent="x")
    assert all(0.0 <= v <= 1.0 for v in base.tracks.values())
    regressions, _ = compare(base, base, tolerance=0.0)
    assert regressions == []


def test_baseline_file_is_canonical_and_detects_a_drop(tmp_path: Path):
    base = Baseline(
        tracks={"silence": 0.9, "perspective": 0.8},
        overall=0.85,
        questions={"q_b": 1.0, "q_a": 0.5},
        contract_digest="d1",
        agent="a",
    )
    path = write_baseline(tmp_path / "ci" / "b.json", base)
    text = path.read_text()
    assert text.endswith("\n") and text.index('"perspective"') < text.index('"silence"')
    assert read_baseline(path) == base
    now = Baseline(
        tracks={"silence": 0.84, "perspective": 0.8},
        overall=0.82,
        questions={"q_b": 0.2, "q_a": 0.5},
        contract_digest="d2",
    )
    regressions, notes = compare(read_baseline(path), now, tolerance=0.05)
    assert len(regressions) == 1 and regressions[0].startswith("silence:")
    assert any(n.startswith("q_b: 1.000 -> 0.200") for n in notes)
    assert any("different contract" in n for n in notes)
    assert compare(read_baseline(path), now, tolerance=0.07)[0] == []


def test_a_report_json_is_accepted_as_baseline(tmp_path: Path):
    group = {"means": {"s_adj": 0.75}}
    (tmp_path / "report.json").write_text(json.dumps({"overall": group, "tracks": {"silence": group}}))
    base = read_baseline(tmp_path / "report.json")
    assert base.tracks == {"silence": 0.75} and base.overall == 0.75


@pytest.mark.parametrize(
    "content, message",
    [
        ("{", "invalid JSON"),
        ("[1]", "expected a JSON object"),
        ('{"format": "groundeval-baseline/1", "tracks": {"silence": "high"}}', "valid number"),
        ('{"something": 1}', "not a baseline"),
    ],
)
def test_bad_baselines_are_contract_errors(tmp_path: Path, content: str, message: str):
    (tmp_path / "b.json").write_text(content)
    with pytest.raises(ContractError, match=message):
        read_baseline(tmp_path / "b.json")


# --------------------------------------------------------------------------- settings


def test_settings_are_read_from_pyproject(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.groundeval]\nagent = "pkg:make"\nbaseline = "ci/b.json"\nmin_adjusted = 0.7\n'
        'checks = ["no_governance_violations", "no_regression"]\n'
        "[tool.groundeval.min_adjusted_by_track]\nsilence = 0.9\n"
    )
    cfg = load_config(tmp_path)
    assert cfg.agent == "pkg:make" and cfg.threshold("silence") == 0.9 and cfg.threshold("perspective") == 0.7
    assert cfg.resolve(cfg.baseline) == tmp_path / "ci" / "b.json"
    assert cfg.checks == ("no_governance_violations", "no_regression")
    assert cfg.with_overrides(agent=None, mode="context").agent == "pkg:make"


def test_defaults_without_pyproject(tmp_path: Path):
    cfg = load_config(tmp_path)
    assert cfg == GateConfig(root=tmp_path)
    assert cfg.checks == ALL_CHECKS and cfg.threshold("silence") is None


@pytest.mark.parametrize(
    "table, field",
    [
        ({"min_adjusted": 1.5}, "tool.groundeval.min_adjusted"),
        ({"tolerance": True}, "tool.groundeval.tolerance"),
        ({"min_adjusted_by_track": {"gossip": 0.5}}, "tool.groundeval.min_adjusted_by_track.gossip"),
        ({"checks": ["no_such_check"]}, "tool.groundeval.checks"),
        ({"mode": "telepathy"}, "tool.groundeval.mode"),
        ({"concurrency": -1}, "tool.groundeval.concurrency"),
        ({"agent": ""}, "tool.groundeval.agent"),
    ],
)
def test_bad_settings_name_the_key(tmp_path: Path, table, field):
    with pytest.raises(ContractError) as err:
        parse_table(table, tmp_path / "pyproject.toml")
    assert err.value.problems[0].field == field


def test_invalid_toml_is_a_contract_error(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.groundeval\n")
    with pytest.raises(ContractError, match="invalid TOML"):
        load_config(tmp_path)
