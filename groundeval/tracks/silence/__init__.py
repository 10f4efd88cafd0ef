"""Silence — "was a postmortem written for INC-42?" One package holds the whole track:

* ``model.py`` — its truth and answer models;
* ``candidates.py`` — presences and verified absences of the silence pair specs;
* ``track.py`` — the :class:`~groundeval.tracks.Track` it registers: configuration,
  answer schema, scoring (search-space coverage);
* ``paper.py`` — its formulas under the ``paper`` scoring profile.
"""

from __future__ import annotations

from .model import NAME, SilenceAnswer, SilenceTruth
from .track import TRACK, TRAJ_WEIGHTS, Silence

__all__ = ["NAME", "TRACK", "TRAJ_WEIGHTS", "Silence", "SilenceAnswer", "SilenceTruth"]
