"""The graduated contract verifier: is a pack sound before any agent runs on it?

``verify(pack, level=4)`` returns every finding (rule id, severity, file, line,
JSON path, message, fix hint) in one pass; see ``docs/verifier.md``.
"""

from __future__ import annotations

from .engine import verify
from .model import Finding, Rule, VerificationResult

__all__ = ["verify", "Finding", "Rule", "VerificationResult"]
