"""The reference agents play any registered track: a toy fourth track, declared outside the
package, gets valid answers from the oracle (all correct), the leaky, lazy and keyword
baselines, in tool and context modes — through the track registry and the generic
playbook, with no code for it in ``groundeval/agents``."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import Field
from toy_tracks import every_event

from groundeval import tracks
from groundeval.agents import playbook as P
from groundeval.agents.registry import get_agent
from groundeval.agents.runner import run_questions
from groundeval.models import StrictModel
from groundeval.questions.answers import AnswerBase
from groundeval.questions.balance import Candidate
from groundeval.questions.generate import generate
from groundeval.scoring import answers as A
from groundeval.scoring.score import score
from groundeval.store.store import Store
from groundeval.trace.io import read_traces

TOY = "echo"


class EchoTruth(StrictModel):
    track: Literal["echo"] = TOY
    several: bool
    event_id: str
    artifacts: list[str] = Field(default_factory=list)
    evidence_artifacts: list[str] = Field(default_factory=list)


class EchoAnswer(AnswerBase):
    several: bool
    evidence_artifacts: list[str] = Field(default_factory=list)


class Echo(tracks.BaseTrack):
    """Toy: "is this event recorded in more than one document?" (declares its truth's ids)."""

    name = TOY
    truth_model = EchoTruth
    answer_model = EchoAnswer
    buckets = ("several", "one")
    yes_buckets = ("several",)
    label_field = "several"
    templates = (("echo.1", "Is {event} recorded in more than one document?"),)
    max_questions = 6

    def truth_ids(self, truth: EchoTruth) -> list[str]:
        return [truth.event_id, *truth.artifacts]

    def candidates(self, ctx: tracks.GenerationContext, pool: Any) -> tuple[list[Candidate], dict[str, int]]:
        def truth(eid: str, arts) -> EchoTruth:
            several = len(arts) > 1
            return EchoTruth(
                several=several,
                event_id=eid,
                artifacts=sorted(arts),
                evidence_artifacts=sorted(arts) if several else [],
            )

        return every_event(ctx, self, truth), {}

    def score(self, question, truth, answer, path, v, config) -> tracks.TrackScore:
        said = A.boolean(answer, "several")
        correct = said is not None and said == truth.several
        return tracks.TrackScore({"several": float(correct)}, float(correct), correct, {}, 1.0, True, None)


@pytest.fixture(scope="module")
def toy(tiny_pack):
    tracks.register(Echo())
    store = Store.open(tiny_pack)
    try:
        qs = generate(store)
        yield store, [q for q in qs.questions if q.track == TOY]
    finally:
        store.close()
        tracks.unregister(TOY)


def _run(store, questions, agent, mode, out):
    traces = {
        t.question_id: t for t in read_traces(run_questions(store, questions, get_agent(agent), mode=mode, out_dir=out))
    }
    return [(q, traces[q.id]) for q in questions]


@pytest.mark.parametrize("mode", ["tool", "context"])
def test_the_oracle_answers_a_toy_track_correctly(toy, mode, tmp_path):
    store, questions = toy
    assert questions and {q.bucket for q in questions} == {"several", "one"}
    assert type(P.playbook(TOY)) is P.Playbook  # the generic one: nothing registered for it
    for q, trace in _run(store, questions, "oracle", mode, tmp_path):
        assert trace.status == "completed", trace.messages
        s = score(q, trace)
        assert s.answer_correct, (q.id, trace.final_answer)
        truth = q.ground_truth
        seen = set(trace.context_ids) if mode == "context" else set(truth.evidence_artifacts)
        # it cites the evidence it could read (in context mode: what the window holds)
        assert trace.final_answer["evidence_artifacts"] == sorted(set(truth.evidence_artifacts) & seen), q.id
        if mode == "tool" and truth.artifacts:  # it read what the truth points to (every id an artifact)
            assert {c.arguments["artifact_id"] for c in trace.calls if c.tool == "fetch_artifact"} == set(
                truth.artifacts
            )


@pytest.mark.parametrize("agent", ["leaky", "lazy", "keyword"])
def test_the_baselines_give_valid_answers_on_a_toy_track(toy, agent, tmp_path):
    store, questions = toy
    runs = _run(store, questions, agent, "tool", tmp_path)
    assert all(t.status == "completed" and t.submissions[-1].valid for _, t in runs), [
        (q.id, t.status, t.messages) for q, t in runs
    ]
    said = {q.id: t.final_answer["several"] for q, t in runs}
    if agent == "lazy":
        assert set(said.values()) == {False}
    if agent == "leaky":  # it takes every artifact the truth names and says yes when it took any
        assert said == {q.id: bool(q.ground_truth.artifacts) for q, _ in runs}
        assert all(
            {c.arguments["artifact_id"] for c in t.calls if c.tool == "fetch_artifact"} == set(q.ground_truth.artifacts)
            for q, t in runs
        )


def test_a_track_may_register_its_own_playbook(toy, tmp_path):
    store, questions = toy

    class Contrary(P.Playbook):
        def oracle_answer(self, truth, got, events, question, context=False):
            return {"several": not truth.several}

    P.register(TOY, Contrary)
    try:
        runs = _run(store, questions, "oracle", "zero-shot", tmp_path)
    finally:
        P.register(TOY, P.Playbook)
    assert all(not score(q, t).answer_correct for q, t in runs)
