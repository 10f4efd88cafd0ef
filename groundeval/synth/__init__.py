"""Synthetic organisations at any scale (``groundeval synth``), for benchmarks and demos."""
