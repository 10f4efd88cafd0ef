"""Agent RL on groundeval: the reward (exactly the scorer's numbers), a step-style
environment over the gated runtime, deterministic process diagnostics, the
reward-hacking suite (packs and worlds), the RL reward of worlds, and (extra ``verifiers``) ``verifiers``
environments for packs and for worlds (``verifiers_common``: what the two share)."""

__all__ = [
    "diagnostics",
    "env",
    "hacking",
    "reward",
    "verifiers_common",
    "verifiers_env",
    "verifiers_worlds",
    "world_hacking",
    "world_reward",
]  # the public modules
