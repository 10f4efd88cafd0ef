"""Level 3 — semantics (filled in below)."""
