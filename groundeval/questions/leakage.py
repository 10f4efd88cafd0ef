"""The leakage validator: question text must not give the answer away.

Rejected: artifact or event ids of the question's ground truth (matched as whole
tokens, case-insensitively), ground-truth vocabulary (mechanism names and aliases of
every causal spec, directions, bucket names), answer-leaking phrases, and circular
counterfactuals whose outcome only restates the premise.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

LEAKING_PHRASES = (
    "no causal link",
    "no_causal_link",
    "cause_to_effect",
    "effect_to_cause",
    "ground truth",
    "the answer is",
    "correct answer",
    "could not have known",
    "could have known:",
    "not visible",
    "was visible",
    "access denied",
    "permission denied",
    "restricted to",
    "was blocked",
    "never written",
    "never happened",
    "does not exist",
    "did not exist",
    "did not happen",
    "no record exists",
    "negative_permission",
    "negative_temporal",
    "expected search space",
    "search space",
    "evidence_artifacts",
)

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_STOP = frozenset(
    "a an the of to in on for and or had has have not be been was were would it its that this "
    "event about with by at from if did do does than then".split()
)


_TOKEN = re.compile(r"[\w-]+")


@lru_cache(maxsize=65536)
def _token_re(token: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + re.escape(token) + r"(?![\w-])", re.IGNORECASE)


def _contains(text: str, tokens: frozenset[str], needle: str) -> bool:
    """``needle`` occurs in ``text`` as a whole token (case-insensitive)."""
    if _TOKEN.fullmatch(needle):
        return needle.lower() in tokens
    return _token_re(needle).search(text) is not None


@lru_cache(maxsize=256)
def _vocab_re(vocabulary: tuple[str, ...]) -> re.Pattern[str] | None:
    """One alternation of every term (and its underscore-free spelling) as whole tokens."""
    terms = sorted({v for t in vocabulary for v in (t, t.replace("_", " ")) if v.strip()}, key=lambda v: (-len(v), v))
    if not terms:
        return None
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(t) for t in terms) + r")(?![\w-])", re.IGNORECASE)


@lru_cache(maxsize=256)
def _term_words(vocabulary: tuple[str, ...]) -> dict[str, list[frozenset[str]]]:
    """First word -> the word sets of the terms (either spelling) starting with it.

    A whole-token match of a term puts each of its words in the text as a whole token,
    so a term whose words are not all among the text's tokens cannot match: the regex
    runs only when some term passes this cheap test."""
    out: dict[str, list[frozenset[str]]] = {}
    for t in vocabulary:
        for v in (t, t.replace("_", " ")):
            words = _TOKEN.findall(v.lower())
            if words:
                out.setdefault(words[0], []).append(frozenset(words))
    return out


_PHRASES = re.compile("|".join(re.escape(p) for p in LEAKING_PHRASES))


def leaks(text: str, *, ids: Iterable[str] = (), vocabulary: Iterable[str] = ()) -> list[str]:
    """Reasons the text leaks (empty when clean)."""
    low = text.lower()
    reasons = []
    if any(p in low for p in LEAKING_PHRASES):  # substring test first: the alternation is slower
        reasons += [f"leaking phrase {m!r}" for m in sorted(set(_PHRASES.findall(low)))]
    tokens = frozenset(_TOKEN.findall(low))
    for token in sorted({t for t in ids if t and t.strip()}):
        if _contains(text, tokens, token):
            reasons.append(f"contains id {token!r}")
    vocab = tuple(sorted(set(vocabulary)))
    pattern = _vocab_re(vocab)
    firsts = _term_words(vocab)
    if pattern is not None and any(words <= tokens for w in tokens & firsts.keys() for words in firsts[w]):
        reasons += [f"contains ground-truth term {m!r}" for m in sorted({m.lower() for m in pattern.findall(text)})]
    return reasons


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def circular(premise: str, outcome: str) -> bool:
    """The outcome says nothing the premise does not (premise restated as outcome)."""
    out = content_words(outcome)
    return not out or out <= content_words(premise)
