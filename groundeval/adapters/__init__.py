"""Gated tools as native tools of agent frameworks, one module per framework, each behind its
own extra and imported only when used: ``openai_agents`` (OpenAI Agents SDK), ``langgraph``
(LangChain tools for LangGraph), ``crewai``, ``agent_framework`` (Microsoft Agent Framework) and
``pydantic_ai``. ``core`` is what they share; ``observed`` replays a run a framework's own
tracing recorded into a groundeval trace (docs/integration.md)."""

__all__ = [
    "agent_framework",
    "core",
    "crewai",
    "langgraph",
    "observed",
    "openai_agents",
    "pydantic_ai",
]  # the public modules
