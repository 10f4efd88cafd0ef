"""Subsetting on ``run`` / ``eval`` (issue 32 item 6): ``--track``, ``--bucket``, ``--question-id``
(repeatable, shell patterns) and ``--limit`` select questions deterministically, in the set's own
order; the selection is the run's question set (saved, resumed, scored, reported)."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_run import cli

from groundeval.errors import UsageError
from groundeval.questions.generate import generate
from groundeval.questions.subset import Subset
from groundeval.store.store import Store


@pytest.fixture(scope="module")
def tiny_set(tiny_pack):
    store = Store.open(tiny_pack)
    try:
        return generate(store)
    finally:
        store.close()


def _selected(qs, tracks=(), buckets=(), ids=()):
    return [
        q
        for q in qs.questions
        if (not tracks or q.track in tracks)
        and (not buckets or q.bucket in buckets)
        and (not ids or any(fnmatchcase(q.id, p) for p in ids))
    ]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_the_subset_is_the_matching_questions_in_order_cut_at_the_limit(tiny_set, data):
    qs = tiny_set
    tracks = tuple(data.draw(st.sets(st.sampled_from(sorted({q.track for q in qs.questions})), max_size=2)))
    buckets = tuple(data.draw(st.sets(st.sampled_from(sorted({q.bucket for q in qs.questions})), max_size=3)))
    ids = tuple(data.draw(st.sets(st.sampled_from(sorted(q.id[:4] + "*" for q in qs.questions)), max_size=2)))
    limit = data.draw(st.none() | st.integers(1, 30))
    expected = _selected(qs, tracks, buckets, ids)
    subset = Subset(tracks, buckets, ids, limit)
    if not expected:
        with pytest.raises(UsageError):
            subset.apply(qs)
        return
    got = subset.apply(qs)
    assert got.questions == expected[:limit]  # the set's order, the first N
    assert got.metadata == qs.metadata
    assert Subset(tracks, buckets, ids, limit).apply(qs) == got  # the same options, the same questions


def test_nothing_selected_is_the_set_itself(tiny_set):
    assert Subset().apply(tiny_set) is tiny_set and not Subset()


def test_a_selection_the_set_cannot_meet_is_a_usage_error_naming_what_it_holds(tiny_set):
    with pytest.raises(UsageError, match=r"--track: 'nope' is not in the question set; it holds .*silence"):
        Subset(tracks=("nope",)).apply(tiny_set)
    with pytest.raises(UsageError, match=r"--question-id: 'zz\*' matches no question"):
        Subset(question_ids=("zz*",)).apply(tiny_set)


def test_eval_runs_scores_and_reports_only_the_subset(tiny_set, tmp_path, capsys):
    silence = [q for q in tiny_set.questions if q.track == "silence"]
    out = tmp_path / "o"
    code, stdout, _ = cli(capsys, "eval", "tiny", "--agent", "oracle", "--out", str(out), "-q", "--track", "silence")
    assert code == 0
    saved = json.loads((out / "questions.json").read_text())
    assert [q["id"] for q in saved["questions"]] == [q.id for q in silence]
    traces = [json.loads(line)["question_id"] for line in (out / "traces.jsonl").read_text().splitlines()]
    assert sorted(traces) == sorted(q.id for q in silence)
    report = json.loads((out / "report.json").read_text())
    assert report["overall"]["n"] == len(silence) and report["missing_question_ids"] == []
    assert list(report["tracks"]) == ["silence"]


def test_run_with_patterns_and_a_limit_then_resume_runs_nothing_new(tiny_set, tmp_path, capsys):
    first_two = [q.id for q in tiny_set.questions][:2]
    out = tmp_path / "r"
    args = ["run", "tiny", "--agent", "oracle", "--out", str(out), "-q"]
    sel = ["--question-id", first_two[0], "--question-id", first_two[1][:5] + "*", "--limit", "2"]
    sel += ["--track", "perspective", "--track", "silence"]  # silence: none of the two, nor of the saved set
    code, stdout, _ = cli(capsys, *args, *sel)
    assert code == 0 and "2/2 episodes" in stdout
    ran = [json.loads(line)["question_id"] for line in (out / "traces.jsonl").read_text().splitlines()]
    assert ran == first_two or sorted(ran) == sorted(first_two)
    code, stdout, _ = cli(capsys, *args, *sel, "--resume")
    assert code == 0 and "2/2 episodes" in stdout
    assert len((out / "traces.jsonl").read_text().splitlines()) == 2


def test_a_bad_selection_on_the_command_line_exits_2(tmp_path, capsys):
    code, _, err = cli(capsys, "run", "tiny", "--agent", "oracle", "--out", str(tmp_path / "x"), "--bucket", "nope")
    assert code == 2 and "--bucket: 'nope' is not in the question set" in err and "Traceback" not in err
    code, _, err = cli(capsys, "eval", "tiny", "--agent", "oracle", "--out", str(tmp_path / "y"), "--limit", "0")
    assert code == 2 and "--limit" in err
