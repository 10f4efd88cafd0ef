"""The oracle: the perfect valid agent, an end-to-end proof that generator, runtime
and scorer agree.

It reads the question's ground truth only to decide *which* valid calls to make —
which artifacts to fetch (those inside the question's gates), which subsystems to
search — and builds its answer from what those calls returned wherever the tools
can show it (was the evidence there? which events reference it? who took part?).
When the tools disagree with the ground truth, the oracle believes the tools, so a
generator/runtime mismatch shows up as a score below 1.0 instead of being papered over.
What that means for each track is the track's :mod:`playbook <.playbook>`.
"""

from __future__ import annotations

from typing import Any

from .answers import fit
from .base import mode_of
from .playbook import SEARCH_LIMIT, Observed, inside_gates, playbook, search_query

__all__ = ["SEARCH_LIMIT", "Observed", "OracleAgent", "inside_gates", "search_query"]


class OracleAgent:
    """Deterministic, valid, complete. Register name: ``oracle``."""

    name = "oracle"

    def run(self, episode: Any) -> None:
        q = episode.question
        book = playbook(q.track)
        mode = mode_of(episode)
        truth = q.ground_truth
        if mode == "context":
            window = [item["artifact"]["id"] for item in episode.context()]
            answer = book.oracle_answer(truth, set(window), _ContextEvents(episode.context()), q, context=True)
        elif mode == "zero-shot":
            answer = book.oracle_answer(truth, None, None, q)
        else:
            seen = Observed()
            book.oracle_reads(episode, q, seen)
            answer = book.oracle_answer(truth, set(seen.fetched), seen.events, q)
        if not episode.done:
            episode.submit(fit(answer, q.answer_schema))


class _ContextEvents(dict):
    """Events of a context window by id (the context-mode analogue of fetched events)."""

    def __init__(self, window: list[dict[str, Any]]):
        super().__init__()
        for item in window:
            for ev in item.get("events") or []:
                self.setdefault(ev.get("id"), ev)
