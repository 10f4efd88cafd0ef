"""The ``groundeval`` command line: thin commands over the Python API."""

__all__ = [
    "generate",
    "graph",
    "info",
    "judge",
    "main",
    "options",
    "run",
    "runtime",
    "scoring",
    "synth",
    "verify",
]  # the public modules
