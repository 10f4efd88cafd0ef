"""The aggregate over columns (one read of every score, slices gathered in canonical order,
the bootstrap's counts from one count over the run) equals the aggregate as it was
(``aggregate_reference``, the previous code kept verbatim): same report bytes, or the same
error, for the scorer's own scores and for constructed ones holding odd values (NaN and
infinite floats, ints in float fields, unknown tracks, buckets and difficulties, None agents
beside empty ones, ties broken by the JSON of the score)."""

from __future__ import annotations

import random

import pytest
from aggregate_reference import aggregate_reference
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scoring_properties import cases
from test_scoring_score_line import raw_scores

from groundeval.contract.models import ScoringConfig
from groundeval.scoring.aggregate import aggregate, group_stats
from groundeval.scoring.model import QuestionScore
from groundeval.scoring.score import score

# odd values in constructed scores make pydantic warn when their report is serialised
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _outcome(fn, *args, **kw):
    try:
        return "ok", fn(*args, **kw).model_dump_json()
    except Exception as exc:  # noqa: BLE001 - the two must fail alike
        return "error", type(exc).__name__, str(exc)


def _same(scores, **kw):
    got = _outcome(aggregate, None, None, scores, **kw)
    assert got == _outcome(aggregate_reference, None, None, scores, **kw)
    return got


FEW = st.sampled_from(["", "a", "b", "perspective", "silence", "easy", "hard"])


@st.composite
def few_valued(draw) -> QuestionScore:
    """A constructed score whose keys take few values, so slices hold several scores and
    heads tie (the JSON tie-break), and whose agent is None, empty or named."""
    s = draw(raw_scores())
    values = dict(s.__dict__)
    values.update(
        track=draw(FEW),
        bucket=draw(FEW),
        difficulty=draw(FEW),
        question_id=draw(st.sampled_from(["q1", "q2"])),
        agent=draw(st.sampled_from([None, "", "x"])),
        mode=draw(st.sampled_from(["tool", "context"])),
        trial=draw(st.integers(0, 1)),
        profile="default",
    )
    return QuestionScore.model_construct(**values)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(few_valued(), max_size=25), st.integers(0, 3), st.sampled_from([0, 1, 30]))
def test_equals_the_reference_on_constructed_scores(scores, seed, samples):
    _same(scores, seed=seed, bootstrap_samples=samples)


@settings(max_examples=60, deadline=None)
@given(st.lists(raw_scores(), max_size=12), st.integers(0, 3))
def test_equals_the_reference_on_wild_scores(scores, seed):
    _same(scores, seed=seed, bootstrap_samples=20)  # mixed profiles: the same ValueError


@settings(max_examples=60, deadline=None)
@given(st.lists(cases(), min_size=1, max_size=20), st.randoms(use_true_random=False))
def test_equals_the_reference_on_the_scorer_s_scores(batch, rnd):
    scores = [score(q, t) for q, t in batch]
    rnd.shuffle(scores)
    assert _same(scores, seed=rnd.randint(0, 9), bootstrap_samples=40)[0] == "ok"


def test_equals_the_reference_on_many_scores_of_few_values():
    """Thousands of scores (the binomial draws' large-n branch) over tracks, buckets and difficulties."""
    rng = random.Random(4)
    batch = []
    for i in range(3000):
        s = score(*_case(rng, i))
        batch.append(s)
    rng.shuffle(batch)
    kw = {"seed": 7, "bootstrap_samples": 200}
    assert aggregate(None, None, batch, **kw) == aggregate_reference(None, None, batch, **kw)


def _case(rng, i):
    from scoring_builders import fetch, perspective, silence, trace

    if i % 2:
        q = perspective(qid=f"p{i % 50}", bucket=rng.choice(["positive", "negative_permission"]))
        return q, trace(q, [fetch("slack-1", flags=["actor"] if rng.random() < 0.2 else [])], None, agent=f"a{i}")
    q = silence(rng.random() < 0.5, qid=f"s{i % 40}")
    return q, trace(q, [fetch("PM-43")], {"exists": rng.random() < 0.5}, agent=f"a{i}")


@pytest.mark.parametrize("n", [0, 1, 5])
def test_group_stats_equals_the_reference(n):
    from aggregate_reference import _group_stats as reference_group_stats
    from aggregate_reference import _row

    scores = [score(*_case(random.Random(n), i)) for i in range(n)]
    cfg = ScoringConfig()
    got = group_stats(scores, cfg, samples=30, rng=random.Random(1))
    assert got == reference_group_stats([_row(s) for s in scores], cfg, samples=30, rng=random.Random(1))
