"""Issue 19: pass@k and pass^k are the unbiased estimators (checked against counting
k-subsets of the trials), and the repeated-trials report is deterministic."""

from __future__ import annotations

import itertools

import pytest

from groundeval.scoring.model import QuestionScore
from groundeval.scoring.trials import pass_at_k, pass_hat_k, trial_report


@pytest.mark.parametrize("n", range(1, 7))
def test_estimators_equal_counting_k_subsets(n):
    for c in range(n + 1):
        trials = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(range(n), k))
            assert pass_at_k(n, c, k) == pytest.approx(sum(any(trials[i] for i in s) for s in subsets) / len(subsets))
            assert pass_hat_k(n, c, k) == pytest.approx(sum(all(trials[i] for i in s) for s in subsets) / len(subsets))
    with pytest.raises(ValueError):
        pass_at_k(n, 0, n + 1)


def _score(qid: str, trial: int, valid: bool, track: str = "silence") -> QuestionScore:
    return QuestionScore(
        question_id=qid,
        track=track,
        trial=trial,
        bucket="absence",
        difficulty="easy",
        mode="tool",
        answered=True,
        s_answer=1.0,
        s_traj=1.0,
        s_combined=1.0,
        violation_rate=0.0,
        penalty=1.0,
        s_adj=1.0 if valid else 0.25,
        answer_correct=True,
        path_valid=valid,
        state_invalid_correct=not valid,
        valid_answer=valid,
        failure_class="pass" if valid else "state_invalid_correct",
        v_units=1,
        v_bad=0,
        n_calls=1,
    )


@pytest.mark.parametrize("trials", [3, 6])  # 6: trials resampled afresh rather than enumerated
def test_report_section(trials):
    scores = [
        _score(f"q{i}", k, (i + k) % 3 != 0, "silence" if i % 2 else "perspective")
        for i in range(10)
        for k in range(trials)
    ]
    assert trial_report([s.model_copy(update={"trial": 0}) for s in scores[:10]]) is None  # single trial: none
    a = trial_report(scores, seed=3, samples=300)
    b = trial_report(list(reversed(scores)), seed=3, samples=300)
    assert a.model_dump_json() == b.model_dump_json()  # canonical order, seeded
    assert a.trials == a.k == trials and set(a.tracks) == {"perspective", "silence"}
    for row in a.questions:
        assert row.pass_hat_k == (1.0 if row.valid == trials else 0.0)
    g = a.overall
    assert g.n_questions == 10 and g.n_traces == 10 * trials
    assert g.pass_hat_k["1"] == pytest.approx(sum(s.valid_answer for s in scores) / len(scores))
    for key, value in (
        ("mean_s_adj", g.mean_s_adj),
        (f"pass_at_{trials}", g.pass_at_k[str(trials)]),
        (f"pass_hat_{trials}", g.pass_hat_k[str(trials)]),
    ):
        lo, hi = g.ci95[key]
        assert lo <= value + 1e-9 and value <= hi + 1e-9
