"""Question generation: candidates per track, subject references, balance, text, leakage and the shortcut audit."""

__all__ = [
    "answers",
    "audit",
    "balance",
    "counterfactual",
    "generate",
    "io",
    "leakage",
    "model",
    "perspective",
    "prose",
    "silence",
    "sql",
    "subjects",
    "text",
]  # the public modules
