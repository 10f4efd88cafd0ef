"""Answer-neutral question text: rendering a track's templates, and the time formats.

Subjects are named by ``subjects.py``.

Templates never depend on the label: the same wording serves a "yes" and a "no",
and the template is picked by a seeded hash (balanced per label, see
``generate.assign_templates``), so wording carries no signal about the answer.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache


@lru_cache(maxsize=4096)  # a log has a few dozen event types, named thousands of times per generation
def humanize(event_type: str) -> str:
    return " ".join(event_type.replace("-", " ").replace("_", " ").split())


def with_article(phrase: str) -> str:
    """``phrase`` with its indefinite article, chosen by the first letter written (quotes and
    spaces skipped): "an 'incident thread' event", "a 'postmortem written' event". A vowel
    letter takes "an"; words whose sound differs from their spelling ("user", "hour") are rare
    in event types and not guessed at."""
    first = next((c for c in phrase if c.isalnum()), "")
    return f"{'an' if first.lower() in 'aeiou' and first else 'a'} {phrase}"


def format_time(dt: datetime) -> str:
    dt = dt.astimezone(timezone.utc)
    return (
        dt.strftime("%Y-%m-%d %H:%M UTC")
        if (dt.second or dt.microsecond) == 0
        else dt.strftime("%Y-%m-%d %H:%M:%S UTC")
    )


def format_gap(days: float) -> str:
    if float(days).is_integer():
        n = int(days)
        return f"{n} day" if n == 1 else f"{n} days"
    hours = days * 24
    if float(hours).is_integer():
        return f"{int(hours)} hours"
    return f"{days:g} days"


def render(track: str, template_id: str, slots: dict[str, str]) -> str:
    """The text of template ``template_id`` of ``track`` (its ``templates``) with ``slots`` filled."""
    from ..tracks import get

    for tid, text in get(track).templates:
        if tid == template_id:
            return " ".join(text.format(**slots).split())
    raise KeyError(template_id)
