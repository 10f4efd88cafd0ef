"""The shape-screening helper's side (``python -m groundeval.verifier.rules.screen_helper``):
for each record of a chunk, its facts when it passes the shape checks, else ``None``. The
process that asks drives it through :mod:`.screen`."""

from __future__ import annotations

from groundeval.gc_pause import collector_paused
from groundeval.helper_process import messages, reply

__all__ = ["screen"]


def screen(kind: str, texts: list[str]) -> list[tuple | None]:
    """The helper's answer for one chunk: each record's facts when it passes, else ``None``."""
    from ..context import _facts_of, loads
    from .shape import passes

    out: list[tuple | None] = []
    with collector_paused():
        for text in texts:
            try:
                data = loads(text)
            except (ValueError, RecursionError):
                out.append(None)
                continue
            out.append(_facts_of(data) if passes(kind, data) else None)
    return out


if __name__ == "__main__":  # pragma: no cover - run as a helper process
    for kind, texts in messages():
        reply(screen(kind, texts))
