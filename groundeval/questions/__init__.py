"""What every track shares in question generation: generation over the registered tracks,
subject references, balance, pools, text, leakage, the shortcut audit and the questions
file. A track's own candidates live in its package (``groundeval/tracks/<name>/``); a
model's wording of the texts is an optional LLM part (``groundeval.judge.prose``)."""

__all__ = [
    "answers",
    "audit",
    "balance",
    "generate",
    "io",
    "leakage",
    "model",
    "pool",
    "sql",
    "subjects",
    "text",
]  # the public modules
