"""The leakage validator: question text must not give the answer away.

Rejected: artifact or event ids of the question's ground truth (matched as whole
tokens, case-insensitively), ground-truth vocabulary (mechanism names and aliases of
every causal spec, directions, bucket names), answer-leaking phrases, and circular
counterfactuals whose outcome only restates the premise.
"""

from __future__ import annotations

import re
from typing import Iterable

LEAKING_PHRASES = (
    "no causal link", "no_causal_link", "cause_to_effect", "effect_to_cause", "ground truth", "the answer is",
    "correct answer", "could not have known", "could have known:", "not visible", "was visible",
    "access denied", "permission denied", "restricted to", "was blocked", "never written", "never happened",
    "does not exist", "did not exist", "did not happen", "no record exists", "negative_permission",
    "negative_temporal", "expected search space", "search space", "evidence_artifacts",
)

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_STOP = frozenset("a an the of to in on for and or had has have not be been was were would it its that this "
                  "event about with by at from if did do does than then".split())


def _token_re(token: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + re.escape(token) + r"(?![\w-])", re.IGNORECASE)


def leaks(text: str, *, ids: Iterable[str] = (), vocabulary: Iterable[str] = ()) -> list[str]:
    """Reasons the text leaks (empty when clean)."""
    reasons = []
    low = text.lower()
    for phrase in LEAKING_PHRASES:
        if phrase in low:
            reasons.append(f"leaking phrase {phrase!r}")
    for token in sorted({t for t in ids if t and t.strip()}):
        if _token_re(token).search(text):
            reasons.append(f"contains id {token!r}")
    for word in sorted({v for v in vocabulary if v and v.strip()}):
        if _token_re(word).search(text) or _token_re(word.replace("_", " ")).search(text):
            reasons.append(f"contains ground-truth term {word!r}")
    return reasons


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def circular(premise: str, outcome: str) -> bool:
    """The outcome says nothing the premise does not (premise restated as outcome)."""
    out = content_words(outcome)
    return not out or out <= content_words(premise)
