"""Answer-neutral question text: event descriptions and several templates per track.

Templates never depend on the label: the same wording serves a "yes" and a "no",
and the template is picked by a seeded hash (balanced per label, see
``generate.assign_templates``), so wording carries no signal about the answer.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ..contract.paths import join_key, resolve

TEMPLATES: dict[str, list[tuple[str, str]]] = {
    "perspective": [
        ("perspective.1", "Based only on what {actor} could access as of {as_of}, could {actor} have known "
                          "about {target}?"),
        ("perspective.2", "Using only the information available to {actor} on or before {as_of}, could "
                          "{actor} have learned of {target}?"),
        ("perspective.3", "As of {as_of}, could {actor} have found out about {target} from the sources "
                          "{actor} was able to read?"),
    ],
    "counterfactual": [
        ("counterfactual.1", "Suppose {premise}. Would {effect} have turned out differently{hint}?"),
        ("counterfactual.2", "Counterfactually: if {premise}, would that have changed {effect}{hint}?"),
        ("counterfactual.3", "Consider a world in which {premise}. Would {effect} have been different{hint}?"),
    ],
    "silence": [
        ("silence.1", "Within {gap} after {trigger}, was there a {response} for it?"),
        ("silence.2", "Did a {response} follow {trigger} within {gap}?"),
        ("silence.3", "Is there any record of a {response} for {trigger} in the {gap} that followed?"),
    ],
}


def humanize(event_type: str) -> str:
    return " ".join(event_type.replace("-", " ").replace("_", " ").split())


def format_time(dt: datetime) -> str:
    dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%d %H:%M UTC") if (dt.second or dt.microsecond) == 0 else \
        dt.strftime("%Y-%m-%d %H:%M:%S UTC")


def format_gap(days: float) -> str:
    if float(days).is_integer():
        n = int(days)
        return f"{n} day" if n == 1 else f"{n} days"
    hours = days * 24
    if float(hours).is_integer():
        return f"{int(hours)} hours"
    return f"{days:g} days"


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, dict | list) or value is None:
        return None
    keys = join_key(value)
    text = next(iter(keys)) if len(keys) == 1 else None
    return text if text and text.strip() else None


def describe(event_type: str, record: dict[str, Any], prefer: list[str] | None = None) -> str:
    """``the 'incident resolved' event (incident id INC-42, severity sev1)``.

    Uses the event's scalar facts (join paths first, then the rest by key) — never its
    date (that would give away temporal answers) nor its id."""
    parts: list[str] = []
    used: set[str] = set()
    for path in prefer or []:
        text = _scalar_text(resolve(record, path))
        label = path.split(".")[-1]
        if text and label not in used:
            parts.append(f"{label.replace('_', ' ')} {text}")
            used.add(label)
    facts = record.get("facts") if isinstance(record.get("facts"), dict) else {}
    for key in sorted(facts):
        text = _scalar_text(facts[key])
        if text and key not in used:
            parts.append(f"{key.replace('_', ' ')} {text}")
            used.add(key)
    base = f"the '{humanize(event_type)}' event"
    return f"{base} ({', '.join(parts)})" if parts else base


def names(*records: dict[str, Any]) -> list[str]:
    """The scalar fact values naming these events: how a question names its subject.

    They may coincide with artifact ids (a ticket id is often the incident id); the
    leakage validator allows them, because a question must say what it is about."""
    out = set()
    for record in records:
        facts = record.get("facts") if isinstance(record.get("facts"), dict) else {}
        out |= {t for t in (_scalar_text(v) for v in facts.values()) if t}
    return sorted(out)


def render(track: str, template_id: str, slots: dict[str, str]) -> str:
    for tid, text in TEMPLATES[track]:
        if tid == template_id:
            return " ".join(text.format(**slots).split())
    raise KeyError(template_id)
