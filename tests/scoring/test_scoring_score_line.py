"""The fast canonical score line equals the reference (pydantic dump + sorted ``json.dumps``)
on every score: the scorer's own, validated ones, and constructed ones holding the values the
two JSON writers could spell differently (tiny and huge floats, ints in float fields, bools in
int fields, non-finite floats, unicode, unsorted component dicts)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scoring_properties import cases

from groundeval.scoring.io import read_scores, score_line, score_line_reference, write_scores
from groundeval.scoring.model import QuestionScore
from groundeval.scoring.score import score

WILD_TEXT = st.text(alphabet=st.characters(codec=None), max_size=12)  # surrogates, controls, astral
PLAIN_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
PLAIN_FLOATS = st.one_of(st.floats(0, 1), st.sampled_from([0.0, -0.0, 1.0, 1e-4, 9.99e-5, 1e-5, 5e-324, 0.5]))
WILD_FLOATS = st.one_of(st.floats(), st.sampled_from([1e16, 1e15, 1e300, -1e-7]), st.integers(-3, 3), st.booleans())
PLAIN_INTS = st.integers(0, 10**6)
WILD_INTS = st.one_of(st.integers(-(2**70), 2**70), st.booleans(), st.floats(allow_nan=False).filter(float.is_integer))


SCORE_FLOATS = st.one_of(st.just(0.0), st.floats(1e-4, 1.0), st.floats(1e-4, 1.0).map(lambda x: round(x, 10)))


@st.composite
def raw_scores(draw, plain_floats=PLAIN_FLOATS) -> QuestionScore:
    """A score built without validation: mostly the scorer's plain values (the fast path),
    with, in a third of the scores, any value of another plausible JSON type in a field."""
    wild = draw(st.integers(0, 2)) == 0

    def pick(plain, odd):
        return draw(st.one_of(plain, odd)) if wild and draw(st.integers(0, 5)) == 0 else draw(plain)

    def text():
        return pick(PLAIN_TEXT, WILD_TEXT)

    def num():
        return pick(plain_floats, WILD_FLOATS)

    def count():
        return pick(PLAIN_INTS, WILD_INTS)

    def floats_by_name(size):
        return {text(): num() for _ in range(draw(st.integers(0, size)))}

    f = {name: num() for name in ("s_answer", "s_traj", "s_combined", "violation_rate", "penalty", "s_adj")}
    return QuestionScore.model_construct(
        question_id=text(),
        track=text(),
        trial=draw(st.integers(0, 3)),
        profile=draw(st.sampled_from(["default", "paper"])),
        bucket=text(),
        difficulty=text(),
        mode=text(),
        agent=draw(st.none()) if draw(st.booleans()) else text(),
        answered=draw(st.booleans()),
        **f,
        answer_components=floats_by_name(4),
        traj_components=floats_by_name(4),
        answer_correct=draw(st.booleans()),
        path_valid=draw(st.booleans()),
        state_invalid_correct=draw(st.booleans()),
        valid_answer=draw(st.booleans()),
        failure_class=pick(
            st.sampled_from(["pass", "no_answer", "wrong_answer", "state_invalid_correct"]), st.just("other")
        ),
        failures=[text() for _ in range(draw(st.integers(0, 3)))],
        v_units=count(),
        v_bad=count(),
        n_calls=count(),
        flag_counts={
            k: count() for k in draw(st.lists(st.sampled_from(["horizon", "subsystem", "actor", "é"]), unique=True))
        },
        hallucinated_ids=[text() for _ in range(draw(st.integers(0, 3)))],
        coverage=None if draw(st.booleans()) else num(),
        n_citations=count(),
        citation_rates=floats_by_name(3),
    )


def _reference_or_error(s: QuestionScore) -> str | type:
    try:
        return score_line_reference(s)
    except Exception as exc:  # noqa: BLE001 - the fast path must fail the same way
        return type(exc)


def _assert_written_as_reference(s) -> None:
    """The fast writer gives the reference's line, or fails as the reference fails."""
    expected = _reference_or_error(s)
    if isinstance(expected, str):
        assert score_line(s) == expected
    else:
        with pytest.raises(expected):
            score_line(s)


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic warns on the off-type values, as intended
@settings(max_examples=400, deadline=None)
@given(raw_scores())
def test_fast_line_equals_reference_on_any_values(s):
    expected = _reference_or_error(s)
    if isinstance(expected, str):
        assert score_line(s) == expected
    else:
        try:
            score_line(s)
        except Exception as exc:  # noqa: BLE001
            assert isinstance(exc, expected)
        else:
            raise AssertionError(f"the reference raised {expected.__name__}, the fast path did not")


@settings(max_examples=200, deadline=None)
@given(cases(), st.sampled_from(["default", "paper"]))
def test_fast_line_equals_reference_on_scorer_output(case, profile):
    from groundeval.scoring.profiles import score as profiled

    for s in (score(*case), profiled(*case, None, profile)):
        line = score_line(s)
        assert line == score_line_reference(s)
        back = QuestionScore.model_validate_json(line)
        assert score_line(back) == line == score_line_reference(back)


def test_written_file_is_the_reference_lines(tmp_path):
    """write_scores batches its writes: the file is every reference line, in order, once."""
    s = QuestionScore.model_construct(**json.loads(score_line_reference(_one())))
    scores = [s.model_copy(update={"question_id": f"q{i}"}) for i in range(9000)]
    path = write_scores(tmp_path / "scores.jsonl", scores)
    assert path.read_text(encoding="utf-8") == "".join(score_line_reference(x) + "\n" for x in scores)
    assert read_scores(path) == scores


def _one() -> QuestionScore:
    from test_scoring_properties import QUESTIONS

    from groundeval.trace.model import Trace

    q = QUESTIONS[0]
    t = Trace(question_id=q.id, track=q.track, mode="tool", actor=q.actor, as_of=q.as_of, contract_digest="d")
    return score(q, t)


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=200, deadline=None)
@given(raw_scores(), st.randoms(use_true_random=False), st.sampled_from(["shuffle", "drop", "extra"]))
def test_fast_line_reads_fields_by_name_whatever_their_order(s, rnd, how):
    """The fast line checks each value against its own field's type, whatever order the
    score's ``__dict__`` holds them in; a score missing a field or holding another name is
    left to the reference (and fails, or not, as it does)."""
    items = list(s.__dict__.items())
    rnd.shuffle(items)
    if how == "drop":
        items.pop()
    elif how == "extra":
        items.append(("extra", 1.0))
    object.__setattr__(s, "__dict__", dict(items))
    _assert_written_as_reference(s)


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=300, deadline=None)
@given(raw_scores(SCORE_FLOATS))
def test_fast_line_equals_reference_on_score_like_values(s):
    """Floats as scores hold them (0, or from 1e-4 to 1, often rounded to 10 digits): mostly
    the fast path, which must write the reference's line."""
    _assert_written_as_reference(s)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "update",
    [
        {"s_adj": 1},  # an int in a float field: the dump writes 1.0
        {"s_adj": True},
        {"coverage": 1},
        {"answer_components": {"known": 1, "b": 0.5}},
        {"s_adj": 1e-5},
        {"s_adj": 5e-7},
        {"s_adj": 1e16},
        {"s_adj": float("nan")},
        {"coverage": float("inf")},
        {"s_adj": -0.0},
        {"question_id": "a:0.00001", "agent": 'x":1e5'},
        {"trial": 0, "profile": "default"},
        {"profile": "".join(["de", "fault"])},  # equal to the default, another object (as unpickled)
        {"trial": 3, "profile": "paper"},
        {"trial": True},
        {"v_units": 2.0},
        {"failure_class": "other"},
        {"failures": ("b", "a")},
        {"hallucinated_ids": ["x", 1]},
        {"flag_counts": {"horizon": True}},
        {"agent": "\ud800"},
    ],
)
def test_fast_line_on_values_the_writers_spell_differently(update):
    s = QuestionScore.model_construct(**{**json.loads(score_line_reference(_one())), **update})
    _assert_written_as_reference(s)
