"""The reward is the scorer's number: the same float ``groundeval score`` writes when no call is
flagged, and under a penalty that counts flagged calls only (padding cannot raise it) otherwise."""

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
from groundeval.rl.reward import Shaping, reward, rl_penalty, rl_score, shaped_value
from groundeval.scoring.score import score


def _traces(store, qs, agents):
    return [(q, run_episode(store, q, a)) for a in agents for q in qs.questions]


def test_reward_is_the_scorers_s_adj_and_components(tiny):
    store, qs = tiny
    config = store.manifest.evaluation.scoring
    seen = set()
    for q, trace in _traces(store, qs, [OracleAgent(), KeywordAgent(), LeakyAgent()]):
        s = score(q, trace, config)
        rl = rl_score(q, trace, config)
        assert rl.v_bad == s.v_bad and rl.v_units == (s.v_bad + 1 if s.v_bad else s.v_units)
        assert rl.penalty == round(rl_penalty(s.v_bad), 10)
        expected = s.s_adj if s.v_bad == 0 else rl.s_adj
        assert reward(q, trace, config=config) == expected <= s.s_adj
        detail = reward(q, trace, config=config, detail=True)
        assert detail["reward"] == expected and detail["s_adj"] == s.s_adj
        assert detail["rl_penalty"] == rl_penalty(s.v_bad)
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
        if s.get("v_bad", 0) == 0:
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
        assert plain <= detail["s_adj"]
        assert detail["reward"] == shaped_value(plain, p) <= plain
        assert reward(q, trace, shaped=True) == detail["reward"]


def test_shaping_rejects_a_lam_outside_0_1():
    import pytest

    with pytest.raises(ValueError, match="lam"):
        Shaping(1.5)


class _Padded:
    """``inner``'s episode after ``n`` distinct searches (the padding of issue 30 item 7)."""

    def __init__(self, inner, n):
        self.inner, self.n, self.name = inner, n, f"padded-{n}"

    def run(self, episode):
        for i in range(self.n):
            episode.search(f"padding {i}")
        self.inner.run(episode)


def test_padding_cannot_raise_the_reward(tiny):
    """The same gate-breaking path after 1 and after 20 harmless searches: the scorer's S_adj
    rises with the padding (v is diluted, and so is Perspective's gate_discipline); the RL
    reward, whose v counts flagged calls only, does not move."""
    from groundeval.rl.hacking import policy

    store, qs = tiny
    raised = flagged = 0
    for q in qs.questions:
        one = run_episode(store, q, _Padded(policy("answer-key-leaky"), 1))
        many = run_episode(store, q, _Padded(policy("answer-key-leaky"), 20))
        assert reward(q, many) == reward(q, one)
        flagged += score(q, one).v_bad > 0
        raised += score(q, many).s_adj > score(q, one).s_adj
    assert flagged and raised == flagged  # padding buys S_adj on every flagged path, never the reward
