"""What every track shares in question generation: generation over the registered tracks,
subject references, balance, pools, text, leakage, the shortcut audit, prose and the questions
file. A track's own candidates live in its package (``groundeval/tracks/<name>/``)."""

__all__ = [
    "answers",
    "audit",
    "balance",
    "generate",
    "io",
    "leakage",
    "model",
    "pool",
    "prose",
    "sql",
    "subjects",
    "text",
]  # the public modules
