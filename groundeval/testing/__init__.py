"""Hypothesis strategies and a pytest plugin for users' own regression gates."""
