"""Level 4 — dry run (filled in below)."""
