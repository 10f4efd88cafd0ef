"""Counterfactual — "if the escalation had been resolved earlier, would the postmortem have
been written sooner?" One package holds the whole track:

* ``model.py`` — its truth and answer models;
* ``candidates.py`` — positive pairs of the causal link specs and their distractors;
* ``track.py`` — the :class:`~groundeval.tracks.Track` it registers: configuration,
  answer schema, scoring;
* ``paper.py`` — its formulas under the ``paper`` scoring profile.
"""

from __future__ import annotations

from .model import DIRECTIONS, NAME, NO_MECHANISM, CounterfactualAnswer, CounterfactualTruth, Direction
from .track import ANSWER_COMPONENTS, TRACK, TRAJ_WEIGHTS, Counterfactual, mechanism_vocabulary

__all__ = [
    "ANSWER_COMPONENTS",
    "DIRECTIONS",
    "NAME",
    "NO_MECHANISM",
    "TRACK",
    "TRAJ_WEIGHTS",
    "Counterfactual",
    "CounterfactualAnswer",
    "CounterfactualTruth",
    "Direction",
    "mechanism_vocabulary",
]
