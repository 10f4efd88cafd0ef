"""Agents: the protocol, the deterministic baselines, the runner and the optional LLM adapters."""

__all__ = [
    "answers",
    "anthropic_messages",
    "base",
    "baselines",
    "complete",
    "http",
    "llm",
    "openai_chat",
    "oracle",
    "playbook",
    "registry",
    "runinfo",
    "runner",
]  # the public modules
