"""Toy tracks that tests register from outside the package. Each is a package shaped like a
built-in one (``groundeval/tracks/<name>/``): ``model.py`` (truth and answer), ``candidates.py``,
``track.py`` (the :class:`groundeval.tracks.Track` it implements) and, optionally, one module per
scoring profile (``paper.py``)."""

from __future__ import annotations

from .provenance.candidates import every_event

__all__ = ["every_event"]
