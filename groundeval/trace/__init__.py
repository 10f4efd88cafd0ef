"""The trace record (every call, its flags, the answer) and its JSONL reading and writing."""

__all__ = ["interface", "io", "model", "text"]  # the public modules
