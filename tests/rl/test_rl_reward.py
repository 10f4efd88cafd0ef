"""The reward is exactly the scorer's number: the same float ``groundeval score`` writes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


from groundeval.api import load_questions
from groundeval.agents.baselines import KeywordAgent, LeakyAgent
from groundeval.agents.oracle import OracleAgent
from groundeval.agents.runner import run_episode
from groundeval.rl.reward import Shaping, reward, shaped_value
from groundeval.scoring.score import score


def _traces(store, qs, agents):
    return [(q, run_episode(store, q, a)) for a in agents for q in qs.questions]


def test_reward_is_the_scorers_s_adj_and_components(tiny):
    store, qs = tiny
    config = store.manifest.evaluation.scoring
    seen = set()
    for q, trace in _traces(store, qs, [OracleAgent(), KeywordAgent(), LeakyAgent()]):
        s = score(q, trace, config)
        assert reward(q, trace, config=config) == s.s_adj
        detail = reward(q, trace, config=config, detail=True)
        assert detail["reward"] == detail["s_adj"] == s.s_adj
        assert detail["answer_components"] == s.answer_components
        assert detail["traj_components"] == s.traj_components
        assert (detail["s_answer"], detail["s_traj"], detail["penalty"]) == (s.s_answer, s.s_traj, s.penalty)
        seen.add(s.s_adj)
    assert len(seen) > 3  # the three agents' traces span several distinct rewards


@pytest.mark.slow
def test_reward_equals_groundeval_score_on_saved_traces(tmp_path, tiny_pack):
    """Run the keyword agent with the CLI, re-score with ``groundeval score``; reward() on the
    saved traces gives the very numbers in scores.jsonl."""
    cli = [sys.executable, "-m", "groundeval.cli.main"]
    subprocess.run(
        [*cli, "run", str(tiny_pack), "--agent", "keyword", "--out", str(tmp_path), "--quiet"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*cli, "score", str(tmp_path / "traces.jsonl"), "-q", str(tmp_path / "questions.json")],
        check=True,
        capture_output=True,
    )
    qs = load_questions(tmp_path / "questions.json")
    by_id = {q.id: q for q in qs.questions}
    from groundeval.trace.io import read_traces

    traces = read_traces(tmp_path / "traces.jsonl")
    scores = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert len(traces) == len(scores) == len(qs.questions)
    for trace, s in zip(traces, scores):
        assert s["question_id"] == trace.question_id
        assert reward(by_id[trace.question_id], trace) == s["s_adj"]


@settings(max_examples=200, deadline=None)
@given(s_adj=st.floats(0, 1).map(lambda x: round(x, 10)), p=st.floats(0, 1), lam=st.floats(0, 1))
def test_shaped_never_exceeds_s_adj_and_equals_it_for_a_clean_path(s_adj, p, lam):
    value = shaped_value(s_adj, p, Shaping(lam))
    assert 0.0 <= value <= s_adj  # S_adj is rounded to 10 digits, as the scorer writes it
    assert shaped_value(s_adj, 1.0, Shaping(lam)) == round(s_adj, 10)
    assert shaped_value(s_adj, p, Shaping(0.0)) == round(s_adj, 10)


def test_shaped_reward_on_real_traces(tiny):
    store, qs = tiny
    for q, trace in _traces(store, qs, [OracleAgent(), KeywordAgent()]):
        plain = reward(q, trace)
        detail = reward(q, trace, shaped=True, detail=True)
        p = detail["diagnostics"]["process_score"]
        assert detail["s_adj"] == plain
        assert detail["reward"] == shaped_value(plain, p) <= plain
        assert reward(q, trace, shaped=True) == detail["reward"]


def test_shaping_rejects_a_lam_outside_0_1():
    import pytest

    with pytest.raises(ValueError, match="lam"):
        Shaping(1.5)
