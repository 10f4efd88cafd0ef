"""Task contracts as a track: the fourth kind of evaluation, on the :class:`Track` protocol.

The protocol is built for generated questions: a track proposes candidates from a pack,
and scores a gated trace against a question's ground truth. A task contract has no pack to
generate from and scores an observed run of the agent's own tools, so :class:`TaskTrack`
adapts through :class:`BaseTrack`: it generates nothing (cap 0, so the generator, verifier
and reports that loop over the registry skip it), and its ``score`` takes the contract in
the place of the ground truth and the observed run in the place of the answer. Its scores
also convert to :class:`~groundeval.scoring.model.QuestionScore` rows, so the report's
aggregates, tables and HTML cover task runs as they cover questions.

It is registered on demand (:func:`register_task_track`), not as a built-in: the built-in
tracks' outputs (goldens, schemas, default weights) stay exactly as they were.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from ..tracks import BaseTrack, TrackScore
from ..tracks import get as get_track
from ..tracks import is_registered, register
from .model import TaskContract
from .score import TaskScore, score_run

__all__ = ["TRACK", "TaskTrack", "register_task_track", "to_question_score"]


class _NoAnswer(BaseModel):
    """Task runs answer with tool calls, not an answer object."""


class TaskTrack(BaseTrack):
    name: ClassVar[str] = "task"
    truth_model: ClassVar[type[BaseModel]] = TaskContract
    answer_model: ClassVar[type[BaseModel]] = _NoAnswer
    buckets: ClassVar[tuple[str, ...]] = ("task",)
    label_field: ClassVar[str] = "reviewed"
    templates: ClassVar[tuple[tuple[str, str], ...]] = ()
    default_weights: ClassVar[tuple[float, float]] = (0.5, 0.5)
    max_questions: ClassVar[int] = 0  # generates nothing: a task contract is written, not generated

    def configured(self, ev: Any) -> bool:
        return False

    def score_run(self, contract: TaskContract, run: Any) -> TaskScore:
        return score_run(contract, run)

    def score(self, question: Any, truth: Any, answer: Any, path: Any, v: float, config: Any) -> TrackScore:
        """``truth``: the :class:`TaskContract`; ``answer``: the observed run (its components
        and verdict; the caller applies weights and ``(1 - v)^2`` as for every track)."""
        s = score_run(truth, answer)
        return TrackScore(
            s.answer_components,
            s.s_answer,
            s.correct,
            s.traj_components,
            s.s_traj,
            s.traj_components.get("preconditions", 1.0) == 1.0,
            None,
        )


TRACK = TaskTrack()


def register_task_track() -> TaskTrack:
    """Register the task track (idempotent); returns the registered instance."""
    if not is_registered(TRACK.name):
        register(TRACK)
    track = get_track(TRACK.name)
    assert isinstance(track, TaskTrack)
    return track


def to_question_score(s: TaskScore) -> Any:
    """The task score as a report row (track ``task``, bucket = the task, difficulty = the
    primary failure class, so the report's slices show them)."""
    from ..scoring.model import QuestionScore

    if s.correct and s.failure_class == "pass":
        cls = "pass"
    elif s.correct:
        cls = "state_invalid_correct"
    else:
        cls = "no_answer" if s.answer_components.get("decision", 1.0) == 0.0 else "wrong_answer"
    return QuestionScore(
        question_id=s.run_id,
        track="task",
        bucket=s.task,
        difficulty=s.failure_class,
        mode="observed",
        agent=",".join(s.agents) or None,
        answered=s.answer_components.get("decision", 1.0) > 0,
        s_answer=s.s_answer,
        s_traj=s.s_traj,
        s_combined=s.s_combined,
        violation_rate=s.violation_rate,
        penalty=s.penalty,
        s_adj=s.s_adj,
        answer_components=s.answer_components,
        traj_components=s.traj_components,
        answer_correct=s.correct,
        path_valid=s.v_bad == 0 and s.traj_components.get("preconditions", 1.0) == 1.0,
        state_invalid_correct=cls == "state_invalid_correct",
        valid_answer=cls == "pass",
        failure_class=cls,
        failures=s.failures,
        v_units=s.n_calls,
        v_bad=s.v_bad,
        n_calls=s.n_calls,
        flag_counts={},
    )
