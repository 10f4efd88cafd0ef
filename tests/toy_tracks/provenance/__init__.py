"""Provenance (toy): "is the event with this id recorded in more than one document?"

* ``model.py`` — its truth and answer models;
* ``candidates.py`` — one candidate per event of the log;
* ``track.py`` — :class:`Provenance`, the track (registered by the tests that use it);
* ``paper.py`` — its formulas under the ``paper`` scoring profile.
"""

from __future__ import annotations

from .model import NAME, ProvenanceAnswer, ProvenanceTruth
from .track import Provenance

__all__ = ["NAME", "Provenance", "ProvenanceAnswer", "ProvenanceTruth"]
