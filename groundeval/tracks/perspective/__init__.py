"""Perspective — "based only on what Morgan could access as of March 5, could Morgan have
known X?" One package holds the whole track:

* ``model.py`` — its truth and answer models;
* ``candidates.py`` — the labelled candidates (the visibility cone at actor and as-of);
* ``track.py`` — the :class:`~groundeval.tracks.Track` it registers: configuration,
  answer schema, scoring, the verifier's dry-run checks;
* ``paper.py`` — its formulas under the ``paper`` scoring profile.
"""

from __future__ import annotations

from .model import NAME, PerspectiveAnswer, PerspectiveTruth
from .track import ANSWER_WEIGHTS, TRACK, TRAJ_WEIGHTS, Perspective

__all__ = ["ANSWER_WEIGHTS", "NAME", "TRACK", "TRAJ_WEIGHTS", "Perspective", "PerspectiveAnswer", "PerspectiveTruth"]
