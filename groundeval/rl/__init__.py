"""Agent RL on groundeval: the reward (exactly the scorer's numbers), a step-style
environment over the gated runtime, deterministic process diagnostics, the
reward-hacking suite and (extra ``verifiers``) a ``verifiers`` environment."""

__all__ = ["diagnostics", "env", "hacking", "reward", "verifiers_env"]  # the public modules
