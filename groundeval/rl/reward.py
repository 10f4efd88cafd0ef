"""The reward for agent RL: exactly the scorer's numbers, in the shape trainers expect.

``reward(question, trace)`` is the scorer's ``S_adj`` for that trace — the same number
``groundeval score`` writes to ``scores.jsonl`` — because it *is* the scorer
(:func:`groundeval.scoring.profiles.score`), not a re-implementation. With
``detail=True`` it returns every component instead of the single number.

The **shaped** variant (opt-in, ``shaped=True``) multiplies ``S_adj`` by a process factor
from the deterministic diagnostics (:mod:`groundeval.rl.diagnostics`)::

    r_shaped = S_adj * (1 - lam * (1 - P))        P = process_score in [0, 1], lam in [0, 1]

so it never exceeds ``S_adj``, equals it for a clean path (``P = 1``) and cannot turn a
zero into a positive reward: shaping only breaks ties among paths the scorer already
rewards. ``S_adj`` itself is never changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .diagnostics import diagnose

if TYPE_CHECKING:
    from ..contract.models import ScoringConfig
    from ..questions.model import Question
    from ..trace.model import Trace

__all__ = ["DEFAULT_SHAPING", "Shaping", "reward", "shaped_value"]


@dataclass(frozen=True)
class Shaping:
    """How much the process score may take away: ``lam`` in [0, 1] (0: no shaping)."""

    lam: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"Shaping.lam must be in [0, 1], got {self.lam!r}")


DEFAULT_SHAPING = Shaping()


def shaped_value(s_adj: float, process_score: float, shaping: Shaping = DEFAULT_SHAPING) -> float:
    """``S_adj * (1 - lam * (1 - P))``, rounded like the scorer's numbers."""
    return round(s_adj * (1.0 - shaping.lam * (1.0 - process_score)), 10)


def reward(
    question: Question,
    trace: Trace,
    *,
    config: ScoringConfig | None = None,
    shaped: bool = False,
    detail: bool = False,
    profile: str | None = None,
    shaping: Shaping | None = None,
) -> float | dict[str, Any]:
    """The reward of one finished trace.

    * default: the scorer's ``S_adj`` (a float);
    * ``shaped``: ``S_adj`` times the process factor (see the module docstring);
    * ``detail``: a dict — ``reward`` (the value above), ``s_adj``, ``s_answer``, ``s_traj``,
      ``penalty``, ``violation_rate``, the answer and trajectory components, the score's
      failure class and the process diagnostics.

    ``config`` is the pack's scoring config (``store.manifest.evaluation.scoring``; None: the
    defaults, as ``groundeval score`` without ``--pack``); ``profile`` as ``groundeval score --profile``."""
    from ..scoring.profiles import score

    s = score(question, trace, config, profile)
    if not shaped and not detail:
        return s.s_adj
    diag = diagnose(question, trace, s)
    value = shaped_value(s.s_adj, diag.process_score, shaping or DEFAULT_SHAPING) if shaped else s.s_adj
    if not detail:
        return value
    return {
        "reward": value,
        "shaped": shaped,
        "s_adj": s.s_adj,
        "s_answer": s.s_answer,
        "s_traj": s.s_traj,
        "s_combined": s.s_combined,
        "penalty": s.penalty,
        "violation_rate": s.violation_rate,
        "answer_components": dict(s.answer_components),
        "traj_components": dict(s.traj_components),
        "failure_class": s.failure_class,
        "failures": list(s.failures),
        "diagnostics": diag.to_dict(),
    }
