"""One trace per (question, trial) of a run, whatever the other fields of a line say (issue 31,
item 5): a copy of a trace line with ``"agent": null``, another name, a zero-width character
in the name or another mode is a second trace of that question, refused with both lines,
so no question counts twice in a mean."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from report_fixtures import write_run

from cli_run import cli

from groundeval.errors import ContractError
from groundeval.scoring.io import iter_rescore_lines, read_question_set
from groundeval.trace.io import read_traces


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("run") / "run", good=True)


def _lines(folder) -> list[str]:
    return (folder / "traces.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


COPIES = {
    "agent null": {"agent": None},
    "another agent": {"agent": "another-agent"},
    "zero-width space": {"agent": "scripted\u200b"},
    "zero-width joiner first": {"agent": "\u200dscripted"},
    "another mode": {"mode": "context"},
    "agent and mode": {"agent": "x", "mode": "zero-shot"},
}


@pytest.mark.parametrize("change", sorted(COPIES))
def test_a_near_copy_of_a_trace_is_refused(folder, capsys, tmp_path, change):
    lines = _lines(folder)
    copy = {**json.loads(lines[0]), **COPIES[change]}
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(lines) + json.dumps(copy, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, err = cli(
        capsys, "score", str(path), "-q", str(folder / "questions.json"), "--out", str(tmp_path), "--bootstrap", "10"
    )
    assert code == 2, err
    assert f"{path}:{len(lines) + 1}" in err and "first is at line 1" in err and "Traceback" not in err
    assert not (tmp_path / "scores.jsonl").exists()


def test_another_trial_of_the_question_is_scored(folder, capsys, tmp_path):
    lines = _lines(folder)
    other = {**json.loads(lines[0]), "trial": 1, "agent": None}
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(lines) + json.dumps(other) + "\n", encoding="utf-8")
    code, out, err = cli(
        capsys, "score", str(path), "-q", str(folder / "questions.json"), "--out", str(tmp_path), "--bootstrap", "10"
    )
    assert code == 0, err
    assert len((tmp_path / "scores.jsonl").read_text().splitlines()) == len(lines) + 1


# ---------------------------------------------------------------------------- property

agents = st.none() | st.lists(st.sampled_from(["a", "b", "\u200b", "\u200d", "\ufeff", "\u00e9", "e\u0301", " "])).map(
    "".join
)
modes = st.sampled_from(["tool", "context", "zero-shot"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2), agents, modes), min_size=1, max_size=8))
def test_a_file_is_refused_exactly_at_its_first_repeated_question_and_trial(folder, tmp_path, picks):
    """Lines drawn from the run's traces with random trials, agents and modes: re-scoring and
    reading refuse the file at the first line whose (question, trial) came before, else take it."""
    base = [json.loads(line) for line in _lines(folder)]
    lines, seen, first_repeat = [], {}, None
    for n, (i, trial, agent, mode) in enumerate(picks, 1):
        record = {**base[i], "trial": trial, "agent": agent, "mode": mode}
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
        key = (record["question_id"], trial)
        if key in seen and first_repeat is None:
            first_repeat = (n, seen[key])
        seen.setdefault(key, n)
    path = tmp_path / f"traces-{abs(hash(tuple(lines)))}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    questions = {q.id: q for q in read_question_set(folder / "questions.json").questions}
    for read in (
        lambda: read_traces(path),
        lambda: list(iter_rescore_lines(path, questions, workers=0)),
    ):
        if first_repeat is None:
            assert len(read()) == len(lines)
            continue
        with pytest.raises(ContractError) as caught:
            read()
        assert f"{path}:{first_repeat[0]}" in str(caught.value)
        assert f"first is at line {first_repeat[1]}" in str(caught.value)
