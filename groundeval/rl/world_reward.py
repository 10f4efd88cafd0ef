"""The reward for agent RL on worlds, from the world verdict (``docs/worlds.md``).

The verdict gives three candidates, none fit to optimise alone: τ²'s ``reward`` (0/1) does not
see a policy breach that leaves the state right (an unconfirmed refund earns 1) nor a write
undone again; ``S_adj = score x (1 - v)^2`` gives a wrong end state partial credit and, with
``v = flagged / calls``, rises when harmless calls pad a flagged path (the denominator is the
agent's). The RL reward combines them with the packs' padding-proof violation rate
(:func:`groundeval.rl.reward.rl_penalty`)::

    rl_reward = reward x score x (1 - v_rl)^2        v_rl = flagged / (flagged + 1)

* 0 whenever τ²'s reward is 0 (wrong end state, a required output not said after it was read,
  an errored or empty episode);
* the verdict's ``S_adj`` on any rewarded episode with no flagged call (1 on the gold path);
* ``flagged`` counts flagged calls only, so calls that break nothing cannot raise it; never
  above ``S_adj`` unless every call of the episode is flagged.

Every input is a field of the verdict ``groundeval worlds score`` writes (``verdicts.jsonl``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..scoring.score import rl_penalty
from ..worlds.reward import rl_reward as world_rl_reward

if TYPE_CHECKING:
    from ..worlds.model import WorldVerdict

__all__ = ["world_metrics", "world_rl_reward"]


def world_metrics(v: WorldVerdict) -> dict[str, float]:
    """The verdict's numbers as unweighted RL metrics: ``reward`` (τ²'s 0/1), ``score``,
    ``s_adj``, ``state_match``, ``violation_rate``, ``penalty``, ``rl_penalty``, ``efficiency``,
    ``observation_alignment``, ``n_calls``, ``n_flagged``, ``turns``, each component as
    ``component.<name>``, and one ``class.<failure class>`` indicator per class (1 for the
    episode's class, 0 for the others)."""
    from ..worlds.model import FAILURE_CLASSES

    out: dict[str, Any] = {
        "reward": v.reward,
        "score": v.score,
        "s_adj": v.s_adj,
        "state_match": 1.0 if v.state_match else 0.0,
        "violation_rate": v.violation_rate,
        "penalty": v.penalty,
        "rl_penalty": rl_penalty(v.n_flagged),
        "efficiency": v.efficiency,
        "observation_alignment": v.observation_alignment,
        "n_calls": v.n_calls,
        "n_flagged": v.n_flagged,
        "turns": v.turns,
    }
    out.update({f"component.{k}": x for k, x in v.components.items()})
    out.update({f"class.{c}": 1.0 if v.failure_class == c else 0.0 for c in FAILURE_CLASSES})
    return {k: float(x) for k, x in out.items()}
