"""Provenance, the track: declarations, candidates through ``candidates.py``, its scorer."""

from __future__ import annotations

from typing import Any

from groundeval import tracks
from groundeval.questions.balance import Candidate
from groundeval.scoring import answers as A

from .candidates import candidates
from .model import NAME, ProvenanceAnswer, ProvenanceTruth


class Provenance(tracks.BaseTrack):
    """Toy: "is the event with this id recorded in more than one document?"""

    name = NAME
    truth_model = ProvenanceTruth
    answer_model = ProvenanceAnswer
    buckets = ("several", "one")
    yes_buckets = ("several",)
    label_field = "recorded"
    templates = (
        ("provenance.1", "Is {event} recorded in more than one document?"),
        ("provenance.2", "Do several documents record {event}?"),
    )
    max_questions = 6

    def candidates(self, ctx: tracks.GenerationContext, pool: Any) -> tuple[list[Candidate], dict[str, int]]:
        return candidates(ctx, self), {}

    def score(self, question, truth, answer, path, v, config) -> tracks.TrackScore:
        said = A.boolean(answer, "recorded")
        correct = said is not None and said == truth.recorded
        traj = {"looked": float(path.looked or bool(path.fetched))}
        return tracks.TrackScore(
            {"recorded": float(correct)}, float(correct), correct, traj, traj["looked"], traj["looked"] == 1.0, None
        )
