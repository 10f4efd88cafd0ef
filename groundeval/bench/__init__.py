"""Benchmarks of the whole pipeline at chosen scales (``groundeval bench``)."""
