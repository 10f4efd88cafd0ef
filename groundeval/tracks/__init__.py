"""Tracks: kinds of questions, each declared once (:class:`Track`) and found by name here.

The built-in tracks (Perspective, Counterfactual, Silence) are registered on first use,
in that order, which is the order every output lists them in. Another track is one
:func:`register` call away::

    from groundeval.tracks import BaseTrack, register

    class Provenance(BaseTrack):
        name = "provenance"
        ...

    register(Provenance())

A track is one package, ``groundeval/tracks/<name>/``: ``model.py`` (truth and answer),
``candidates.py``, ``track.py`` (the :class:`Track` it registers, as ``TRACK``) and one
module per scoring profile (``paper.py``). Nothing outside a track's own package names a
track: the generator, scorer, verifier, reports, testing plugin and audit all loop over
:func:`tracks`.
"""

from __future__ import annotations

import importlib

from .base import BaseTrack, GenerationContext, Track, TrackScore

__all__ = [
    "BaseTrack",
    "GenerationContext",
    "Track",
    "TrackScore",
    "builtin_tracks",
    "get",
    "is_registered",
    "names",
    "register",
    "tracks",
    "unregister",
]

BUILTIN = ("groundeval.tracks.perspective", "groundeval.tracks.counterfactual", "groundeval.tracks.silence")

_REGISTRY: dict[str, Track] = {}
_BUILTIN: list[Track] = []


def _load_builtins() -> None:
    if _BUILTIN:
        return
    loaded = [importlib.import_module(module).TRACK for module in BUILTIN]
    for track in loaded:
        _REGISTRY.setdefault(track.name, track)
    _BUILTIN.extend(loaded)


def register(track: Track, *, replace: bool = False) -> Track:
    """Add ``track`` to the registry (after the built-ins); returns it.

    A name already registered is an error unless ``replace``."""
    _load_builtins()
    if not isinstance(track, Track):
        raise TypeError(f"{track!r} does not implement the Track protocol")
    if track.name in _REGISTRY and not replace:
        raise ValueError(f"track {track.name!r} is already registered")
    _REGISTRY[track.name] = track
    return track


def unregister(name: str) -> None:
    """Remove a registered track (a built-in cannot be removed)."""
    _load_builtins()
    if any(t.name == name for t in _BUILTIN):
        raise ValueError(f"track {name!r} is built in")
    _REGISTRY.pop(name, None)


def tracks() -> tuple[Track, ...]:
    """Every registered track, built-ins first, in registration order."""
    _load_builtins()
    return tuple(_REGISTRY.values())


def builtin_tracks() -> tuple[Track, ...]:
    """The tracks groundeval ships (their formats are the checked-in ``contracts/``)."""
    _load_builtins()
    return tuple(_BUILTIN)


def names() -> tuple[str, ...]:
    return tuple(t.name for t in tracks())


def is_registered(name: object) -> bool:
    _load_builtins()
    return isinstance(name, str) and name in _REGISTRY


def get(name: str) -> Track:
    """The track called ``name``; ``KeyError`` naming the registered ones otherwise."""
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown track {name!r}; registered: {', '.join(_REGISTRY)}") from None
