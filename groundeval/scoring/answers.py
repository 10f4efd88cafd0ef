"""Reading an agent's answer: canonical field names, tolerated aliases, normalisation;
and the small arithmetic every track's scorer shares (:func:`dice`, :func:`weighted`).

The answer schema the generator writes uses the canonical names (the ground-truth
field names); aliases are accepted so a hand-written agent that says ``mechanism``
instead of ``causal_mechanism`` is judged on substance, not spelling. A field not
listed here is read under its own name only.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# canonical field -> accepted spellings, canonical first
FIELDS: dict[str, tuple[str, ...]] = {
    "could_actor_have_known": ("could_actor_have_known", "could_have_known", "known", "answer"),
    "blocked_subsystems": ("blocked_subsystems",),
    "evidence_artifacts": ("evidence_artifacts", "evidence"),
    "outcome_changed": ("outcome_changed",),
    "causal_mechanism": ("causal_mechanism", "mechanism"),
    "mechanism_direction": ("mechanism_direction", "direction"),
    "cause_event_id": ("cause_event_id",),
    "effect_event_id": ("effect_event_id",),
    "actors": ("actors",),
    "exists": ("exists", "answer"),
}

DIGITS = 10  # scores are rounded so that sums like 0.3 + 0.7 land exactly on 1.0
NONE_MECHANISMS = frozenset({"none", "no causal link", "no mechanism", "no link"})
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def field(answer: dict[str, Any] | None, name: str) -> Any:
    """The value of canonical field ``name`` under any accepted spelling (None if absent)."""
    if not answer:
        return None
    for key in FIELDS.get(name, (name,)):
        if key in answer:
            return answer[key]
    return None


def boolean(answer: dict[str, Any] | None, name: str) -> bool | None:
    value = field(answer, name)
    return value if isinstance(value, bool) else None


def text(answer: dict[str, Any] | None, name: str) -> str | None:
    value = field(answer, name)
    return value.strip() if isinstance(value, str) else None


def id_list(answer: dict[str, Any] | None, name: str) -> list[str]:
    """A list of ids, de-duplicated in first-seen order; anything else is an empty list."""
    value = field(answer, name)
    if not isinstance(value, list) or not value:
        return []
    ids: dict[str, None] = {}
    for v in value:  # once per list in every score: a plain loop, str(v) only for what is not a str
        if type(v) is str:
            ids[v.strip()] = None
        elif isinstance(v, (str, int)):
            ids[str(v).strip()] = None
    return list(ids)


@lru_cache(maxsize=8192)
def norm_label(value: str | None) -> str:
    """Mechanism and direction labels compare case- and punctuation-insensitively (cached:
    a run repeats the same few labels)."""
    if not value:
        return ""
    return _NON_ALNUM.sub(" ", value.casefold()).strip()


def dice(got: list[str] | set[str], want: list[str] | set[str]) -> float:
    """Set agreement 2|A∩B| / (|A|+|B|); two empty sets agree fully."""
    a, b = set(got), set(want)
    if not a and not b:
        return 1.0
    return 2.0 * len(a & b) / (len(a) + len(b))


def weighted(components: dict[str, float], weights: dict[str, float]) -> float:
    """The weighted sum of the components ``weights`` names."""
    return sum(weights[k] * components[k] for k in weights)
