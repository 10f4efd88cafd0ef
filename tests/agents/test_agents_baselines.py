"""The built-in agents on every bundled pack, through generator, runtime and scorer.

The oracle scoring S_adj = 1.0 on every question is the end-to-end proof that the
three agree on what a valid, complete path is. The other baselines must fail in the
way they are meant to: leaky by breaking gates, lazy by not looking.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval.agents.registry import get_agent
from groundeval.agents.runner import run_questions
from groundeval.questions.generate import generate
from groundeval.scoring.score import score
from groundeval.store.store import Store
from groundeval.trace.io import read_traces

PACKS = sorted(p.parent.name for p in (Path(__file__).resolve().parents[2] / "domain_packs").glob("*/groundeval.yaml"))
_CACHE: dict[str, tuple] = {}


def _load(name: str, repo_root: Path) -> tuple:
    """(name, store, questions, scoring config) of one bundled pack, generated once."""
    if name not in _CACHE:
        store = Store.open(repo_root / "domain_packs" / name)
        _CACHE[name] = (name, store, generate(store), store.manifest.evaluation.scoring)
    return _CACHE[name]


@pytest.fixture(scope="module", params=PACKS)
def pack(request, repo_root):
    return _load(request.param, repo_root)


def _run(pack, agent: str, tmp_path, questions=None, mode: str = "tool"):
    name, store, qs, cfg = pack
    items = qs.questions if questions is None else questions
    traces = read_traces(
        run_questions(store, items, get_agent(agent), out_dir=tmp_path / agent, concurrency=2, mode=mode)
    )
    by_id = {q.id: q for q in items}
    return [(by_id[t.question_id], t, score(by_id[t.question_id], t, cfg)) for t in traces]


def test_packs_are_bundled():
    assert "tiny" in PACKS and len(PACKS) >= 6


def test_oracle_is_perfect_on_every_question(pack, tmp_path):
    results = _run(pack, "oracle", tmp_path)
    assert len(results) == len(pack[2].questions) > 0
    assert {q.track for q, _t, _s in results} == {"perspective", "counterfactual", "silence"}
    imperfect = [
        (q.id, q.track, q.bucket, s.answer_components, s.traj_components, s.failures)
        for q, _t, s in results
        if s.s_adj != 1.0
    ]
    assert not imperfect, f"{pack[0]}: oracle below 1.0 on {len(imperfect)} questions: {imperfect[:3]}"
    assert all(t.status == "completed" and all(not c.flags for c in t.calls) for _q, t, _s in results)


@pytest.mark.parametrize("name", ["tiny", "legal"])  # two packs: the suite's time budget
def test_oracle_is_perfect_in_context_mode(name, repo_root, tmp_path):
    """Citing exactly what the tool-mode perfect path fetches is perfect in context mode."""
    results = _run(_load(name, repo_root), "oracle", tmp_path, mode="context")
    imperfect = [(q.track, q.bucket, s.traj_components, s.citation_rates) for q, _t, s in results if s.s_adj != 1.0]
    assert not imperfect
    assert all(t.mode == "context" and [c.tool for c in t.calls] == ["submit_answer"] for _q, t, _s in results)


def test_leaky_breaks_gates_on_perspective(pack, tmp_path):
    persp = [q for q in pack[2].questions if q.track == "perspective"]
    results = _run(pack, "leaky", tmp_path, persp)
    negatives = [(q, s) for q, _t, s in results if q.bucket != "positive"]
    assert negatives, "every pack has Perspective negatives"
    assert all(s.v_bad > 0 and s.violation_rate > 0 and s.s_adj < 1.0 for _q, s in negatives)
    assert all("gate_violation" in s.failures for _q, s in negatives)


def test_lazy_fails_silence_absence_trajectories(pack, tmp_path):
    absent = [q for q in pack[2].questions if q.track == "silence" and q.bucket == "absence"]
    results = _run(pack, "lazy", tmp_path, absent)
    assert results, "every pack has verified-absence questions"
    for q, t, s in results:
        assert t.final_answer["exists"] is False and [c.tool for c in t.calls] == ["submit_answer"]
        # the right "no", without proof: a state-invalid correct answer
        assert s.answer_correct and not s.path_valid and s.state_invalid_correct
        assert s.s_traj == 0.0 and s.s_adj < 1.0 and "missing_evidence" in s.failures


@pytest.mark.parametrize("name", ["tiny", "enterprise-support"])  # two packs: the suite's time budget
def test_keyword_stays_inside_the_gates(name, repo_root, tmp_path):
    results = _run(_load(name, repo_root), "keyword", tmp_path)
    assert all(t.calls and t.calls[0].tool == "search_artifacts" for _q, t, _s in results)
    # it only fetches search hits, and search ranks only what the caller may see
    flagged = [(q.id, [c.flags for c in t.calls if c.flags]) for q, t, _s in results if any(c.flags for c in t.calls)]
    assert not flagged
    mean = sum(s.s_adj for _q, _t, s in results) / len(results)
    assert 0.0 < mean < 1.0
