"""Provenance's candidates: one question per event of the log. :func:`every_event` is shared
with the other toy tracks of the tests: it labels each event by the track's own truth."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from groundeval import tracks
from groundeval.questions.balance import Candidate
from groundeval.store.store import to_utc

from .model import ProvenanceTruth


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


def candidates(ctx: tracks.GenerationContext, track: tracks.Track) -> list[Candidate]:
    """An event is recorded in several documents when it references more than one artifact."""

    def truth(eid: str, arts: Sequence[str]) -> ProvenanceTruth:
        return ProvenanceTruth(recorded=len(arts) > 1, event_id=eid, artifacts=list(arts))

    return every_event(ctx, track, truth)
