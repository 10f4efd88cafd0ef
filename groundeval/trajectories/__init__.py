"""Trajectory files in the common shapes, read into one model and verified by replay.

``read_trajectories(path)`` streams the trajectories of a file (τ² simulation results, τ-bench
result lists, OpenAI or Anthropic messages, groundeval world traces; the shape is told from the
content), with a located :class:`ReadProblem` wherever a record cannot be read. See
``docs/trajectories.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .model import SHAPES, Call, Location, Message, ReadProblem, Trajectory
from .shapes import detect_shape, read_record
from .stream import RawRecord, iter_records

__all__ = [
    "SHAPES",
    "Call",
    "Location",
    "Message",
    "RawRecord",
    "ReadProblem",
    "Trajectory",
    "detect_shape",
    "iter_records",
    "read_record",
    "read_trajectories",
]


def read_trajectories(path: str | Path, shape: str = "auto") -> Iterator[Trajectory | ReadProblem]:
    """Every trajectory of ``path`` in file order, and a located problem for each record (or the
    rest of a file) that cannot be read; ``shape`` forces one of :data:`SHAPES`."""
    for item in iter_records(path):
        yield item if isinstance(item, ReadProblem) else read_record(item, shape)
