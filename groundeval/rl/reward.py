"""The reward for agent RL: the scorer's numbers, in the shape trainers expect.

``reward(question, trace)`` is the scorer's verdict (:func:`groundeval.scoring.score.score`,
not a re-implementation) with a violation rate that **padding cannot lower**::

    v_rl = bad / (bad + 1)        bad = flagged calls (v_bad; bad citations in context mode)

in place of the scorer's ``v = bad / all calls`` — in the penalty ``(1 - v)^2`` and in every
term that reads ``v`` (Perspective's ``gate_discipline = 1 - v``). An agent controls the
denominator of ``v``, so harmless calls before a gate-breaking one raised ``S_adj`` (the hacking
table's ``padded-leaky``); ``v_rl`` counts flagged calls only, as if each came with one clean
call, so extra calls cannot move it. When nothing is flagged the reward **is** ``S_adj`` (the
number ``groundeval score`` writes); otherwise it is never above it. ``S_adj`` itself, the
paper's tables and the reports keep the scorer's ``v``; the ``paper`` profile's reward is its
``S_adj``. With ``detail=True`` it returns every component instead of the single number.

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

from ..scoring.score import rl_penalty
from .diagnostics import diagnose

if TYPE_CHECKING:
    from ..contract.models import ScoringConfig
    from ..questions.model import Question
    from ..trace.model import Trace

__all__ = ["DEFAULT_SHAPING", "Shaping", "reward", "rl_penalty", "rl_score", "shaped_value"]


def rl_score(question: Any, trace: Any, config: Any = None) -> Any:
    """The scorer's verdict on ``trace`` with ``v_rl = bad / (bad + 1)`` for ``v``: its path
    facts' denominator set to ``bad + 1`` (one clean unit per flagged one), the rest as scored.
    The scorer's own verdict when nothing is flagged."""
    from dataclasses import replace

    from ..scoring.score import path_facts, score_facts

    p = path_facts(trace)
    if p.bad:
        p = replace(p, units=p.bad + 1)
    return score_facts(question, p, trace.final_answer, trace.mode, trace.trial, trace.agent, config, trace.status)


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

    * default: the RL reward (a float; the scorer's ``S_adj`` when no call is flagged, see the
      module docstring);
    * ``shaped``: that reward times the process factor;
    * ``detail``: a dict — ``reward`` (the value above), ``s_adj``, ``rl_penalty``, ``s_answer``, ``s_traj``,
      ``penalty``, ``violation_rate``, the answer and trajectory components, the score's
      failure class and the process diagnostics.

    ``config`` is the pack's scoring config (``store.manifest.evaluation.scoring``; None: the
    defaults, as ``groundeval score`` without ``--pack``); ``profile`` as ``groundeval score --profile``."""
    from ..scoring.profiles import score

    s = score(question, trace, config, profile)
    rl = rl_score(question, trace, config) if s.v_bad and (profile or "default") == "default" else s
    base = min(rl.s_adj, s.s_adj)  # never above the scorer's
    if not shaped and not detail:
        return base
    diag = diagnose(question, trace, s)
    value = shaped_value(base, diag.process_score, shaping or DEFAULT_SHAPING) if shaped else base
    if not detail:
        return value
    return {
        "reward": value,
        "shaped": shaped,
        "s_adj": s.s_adj,
        "rl_penalty": rl_penalty(s.v_bad),
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
