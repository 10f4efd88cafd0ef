"""The pure scorer and run-level aggregation."""

__all__ = [
    "aggregate",
    "answers",
    "interface",
    "io",
    "lines",
    "model",
    "profiles",
    "score",
    "trials",
]  # the public modules
