"""Records the graph derives; times are epoch microseconds (UTC) so they sort and compare exactly.

Records are named tuples: immutable, ordered field by field, and cheap to create by
the million (a 1M-event log yields over a million edges and distractors)."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..store.store import iso, to_utc

AMBIGUOUS_REASONS = ("response_before_trigger", "response_outside_gap", "missing_join_key")


def _out(record: Any) -> dict[str, Any]:
    """A record as plain JSON data: lists for tuples, ISO text next to every ``*_us`` time."""
    out: dict[str, Any] = {}
    for k, v in record._asdict().items():
        if isinstance(v, tuple):
            v = list(v)
        out[k] = v
        if k.endswith("_us"):
            out[k[:-3]] = iso(to_utc(v)) if v is not None else None
    return out


class CausalEdge(NamedTuple):
    """A cause linked to the earliest joined effect inside the spec's gap."""

    spec: str
    cause_event_id: str
    effect_event_id: str
    cause_type: str
    effect_type: str
    cause_ts_us: int
    effect_ts_us: int
    multi_cause: bool = False

    def to_dict(self) -> dict[str, Any]:
        return _out(self)


class Distractor(NamedTuple):
    """A cause and the very next effect-type event in the gap that share no id: no causal link."""

    spec: str
    cause_event_id: str
    effect_event_id: str
    cause_type: str
    effect_type: str
    cause_ts_us: int
    effect_ts_us: int

    def to_dict(self) -> dict[str, Any]:
        return _out(self)


class SilenceRecord(NamedTuple):
    """A trigger with (``presence``) or without (``absence``) its joined response in the gap.

    ``expected_search_space`` is where an honest "no" must have looked: the trigger's
    artifacts plus what the spec's selectors resolve to in the corpus."""

    spec: str
    kind: str
    trigger_event_id: str
    trigger_type: str
    response_type: str
    trigger_ts_us: int
    gap_microseconds: int
    response_event_id: str | None = None
    response_ts_us: int | None = None
    expected_search_space: tuple[str, ...] = ()
    expected_subsystems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _out(self)


class AmbiguousTrigger(NamedTuple):
    """A trigger excluded from Silence questions, with why (and the response, if any)."""

    spec: str
    trigger_event_id: str
    reason: str
    response_event_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _out(self)
