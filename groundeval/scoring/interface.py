"""What every kind of contract's verdict on one episode says: the interface packs and worlds share.

A pack's scorer makes a :class:`groundeval.scoring.model.QuestionScore` per (question, trace);
a world's verdict is ``groundeval.worlds.model.WorldVerdict`` per (task, trace). Both are a
:class:`Verdict`: whose episode, which trial, the failure class, and the governance-adjusted
score ``s_adj = score * (1 - v)^2`` with its ``v`` and penalty. Aggregates, gates and reports that
work across contract kinds read these fields only. ``tests/packaging/
test_packaging_interfaces.py`` checks that both kinds implement it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Verdict(Protocol):
    """The judge-free verdict on one episode."""

    agent: str | None
    trial: int
    failure_class: str  # "pass" / "completed" when nothing failed; otherwise the first failure
    violation_rate: float  # v
    penalty: float  # (1 - v)^2
    s_adj: float  # the score after the penalty


__all__ = ["Verdict"]
