"""Candidates for the toy tracks that tests register from outside the package: one question
per event of the log, labelled by the track's own truth (the track decides what it asks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from groundeval import tracks
from groundeval.questions.balance import Candidate
from groundeval.store.store import to_utc


def every_event(
    ctx: tracks.GenerationContext, track: tracks.Track, truth_of: Callable[[str, Sequence[str]], Any]
) -> list[Candidate]:
    """A candidate per event, named by its id, in bucket "several" when the truth made by
    ``truth_of(event id, its artifacts)`` is a yes and "one" otherwise."""
    out = []
    for eid, etype, ts_us, _raw, _actors, arts, _subs, _mc in ctx.sql.events_info(
        [r[0] for r in ctx.sql.q("SELECT id FROM events ORDER BY id")]
    ):
        truth = truth_of(eid, arts)
        label = track.label(truth)
        payload = {
            "truth": truth,
            "actor": None,
            "as_of": to_utc(ts_us),
            "gates": [],
            "context_subsystems": [],
            "names": [eid],
            "event_type": etype,
            "refs": [f"event {eid}"],
            "subjects": [{"event": eid}],
            "slots": {"event": f"event {eid}"},
        }
        out.append(
            Candidate(
                key=f"{track.name}|{eid}",
                bucket="several" if label else "one",
                label=label,
                difficulty="easy",
                event_type=etype,
                payload=payload,
            )
        )
    return out
