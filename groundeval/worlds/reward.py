"""Rewards from a world verdict for RL (docs/worlds.md, "Reinforcement learning").

The verdict offers three numbers, none fit to optimise alone: τ²'s ``reward`` (0/1) does not see
a policy breach that leaves the state right; ``S_adj = score x (1 - v)^2`` rises when harmless
calls pad a flagged path (``v = flagged / calls``: the denominator is the agent's). The RL
reward uses the packs' padding-proof violation rate instead::

    rl_reward = reward x score x (1 - v_rl)^2        v_rl = flagged / (flagged + 1)

so it is 0 whenever τ²'s reward is 0, the verdict's ``S_adj`` on a rewarded episode with no
flagged call (1 on the gold path), and calls that break nothing cannot raise it.
"""

from __future__ import annotations

from ..scoring.score import rl_penalty
from .model import WorldVerdict

__all__ = ["REWARDS", "rl_reward", "shaped_reward", "world_reward"]


def rl_reward(v: WorldVerdict) -> float:
    """``reward x score x (1 / (1 + flagged))^2``: what RL trainers should optimise."""
    return round(v.reward * v.score * rl_penalty(v.n_flagged), 6)


def shaped_reward(v: WorldVerdict) -> float:
    """``S_adj x (1 + efficiency) / 2``: the verdict's ``S_adj`` with padding and failed calls
    costing reward through tool efficiency (a flagged path padded still gains through ``S_adj``)."""
    return round(v.s_adj * (1.0 + v.efficiency) / 2.0, 6)


REWARDS = {"rl": rl_reward, "s_adj": lambda v: v.s_adj, "shaped": shaped_reward}


def world_reward(v: WorldVerdict, kind: str = "rl") -> float:
    """The reward ``kind`` (``rl``, ``s_adj`` or ``shaped``) of a verdict."""
    return REWARDS[kind](v)
