"""Silence candidates: verified absences and confirmed presences from the graph's records.

As-of is the latest of trigger + gap and the creation of every artifact the
question relies on (search space, response and trigger artifacts), so the whole
expected search space is reachable whatever gates are configured. Absences with an
empty search space are skipped (an honest "no" would have nothing to check), and so
are presences whose response has no artifact to cite. An absence is verified only if
nothing in its window or its expected search space could be the response
(``graph.build.doubtful_absences``): otherwise the trigger is ambiguous, skipped and
counted under the reason.

The trigger is named by ``subjects.py`` (identifiers, actors, then time). It never
shows an id that exists only when the response exists: per spec, a trigger key whose
value, in any sampled record, names an artifact created after the trigger or one the
response references is hidden for every trigger of the spec.
"""

from __future__ import annotations

from typing import Any

from ...contract.models import EvaluationConfig
from ...graph.build import EventGraph
from ...graph.records import SilenceRecord
from ...questions.balance import Candidate, difficulty_of
from ...questions.pool import covering_as_of, sample_size, seeded_sample, skip
from ...questions.subjects import Role, Subject, SubjectIndex, keyed_values, path_key
from ...questions.text import format_gap, humanize, with_article
from ...store.store import to_utc
from .model import SilenceTruth


class Prepared(list):
    """The pool's records with their search spaces, and the absences that are not verified
    (``(spec, trigger) -> (reason, event id)``, see ``graph.build.doubtful_absences``)."""

    doubts: dict[tuple[str, str], tuple[str, str]] = {}


def prepared(records: list[SilenceRecord], doubts: dict[tuple[str, str], tuple[str, str]]) -> Prepared:
    out = Prepared(records)
    out.doubts = doubts
    return out


def pool(eg: EventGraph, ev: EvaluationConfig, seed: int) -> list[SilenceRecord]:
    """A bounded, seeded sample of silence records per (spec, kind), so BM25 search spaces
    are computed for a few hundred records, not every trigger."""
    return sorted(
        seeded_sample(
            eg.presences + eg.absences,
            lambda r: (r.spec, r.kind),
            lambda r: r.trigger_event_id,
            seed,
            "silence",
            sample_size(ev),
        )
    )


def _hidden(
    records: list[SilenceRecord], eg: EventGraph, artifacts: dict[str, tuple[str, int | None]]
) -> dict[str, frozenset[tuple[str, str]]]:
    hide: dict[str, set[tuple[str, str]]] = {}
    for rec in records:
        trigger = eg.events[rec.trigger_event_id]
        answer = set(eg.events[rec.response_event_id].artifacts) if rec.response_event_id else set()
        keys = hide.setdefault(rec.spec, set())
        for k, vals in keyed_values(trigger.record).items():
            if any(v in answer or (v in artifacts and not is_before(artifacts[v][1], trigger.ts_us)) for v in vals):
                keys.add(k)
    return {spec: frozenset(keys) for spec, keys in hide.items()}


def is_before(created_us: int | None, ts_us: int) -> bool:
    """Created no later than the trigger (so it exists whether or not a response came)."""
    return created_us is not None and created_us <= ts_us


def candidates(
    eg: EventGraph,
    ev: EvaluationConfig,
    subjects: SubjectIndex,
    artifacts: dict[str, tuple[str, int | None]],
    records: list[SilenceRecord],
    requests: list[tuple[Any, Subject, Role]] | None = None,
) -> tuple[list[Candidate], dict[str, int]]:
    """Candidates from ``records`` (``requests``: their :func:`subject_requests`, if made)."""
    skipped: dict[str, int] = {}
    specs = {s.key: s for s in ev.silence_pairs}
    usable = _usable(eg, records, skipped, getattr(records, "doubts", {}))
    refs = subjects.resolve(_requests(eg, ev, artifacts, usable) if requests is None else requests)
    out = []
    for n, (rec, exists, evidence) in enumerate(usable):
        if refs[n] is None:
            skip(skipped, "ambiguous_reference")
            continue
        out.append(
            _candidate(
                specs[rec.spec],
                rec,
                exists,
                evidence,
                eg.events[rec.trigger_event_id],
                refs[n],
                artifacts,
                ev.gates.get("silence", []),
            )
        )
    return out, skipped


def subject_requests(
    eg: EventGraph, ev: EvaluationConfig, artifacts: dict[str, tuple[str, int | None]], records: list[SilenceRecord]
) -> list[tuple[Any, Subject, Role]]:
    """The reference requests :func:`candidates` makes for ``records`` (to resolve with other tracks')."""
    return _requests(eg, ev, artifacts, _usable(eg, records, {}, getattr(records, "doubts", {})))


def _requests(
    eg: EventGraph,
    ev: EvaluationConfig,
    artifacts: dict[str, tuple[str, int | None]],
    usable: list[tuple[SilenceRecord, bool, list[str]]],
) -> list[tuple[Any, Subject, Role]]:
    """Each usable record's trigger reference request, keyed by its place in ``usable``."""
    hidden = _hidden([u[0] for u in usable], eg, artifacts)
    prefer = {sp.key: tuple(k for j in sp.join if (k := path_key(j.trigger))) for sp in ev.silence_pairs}
    return [
        (
            n,
            Subject(t.id, t.type, t.ts_us, t.record, tuple(t.actors)),
            Role(hide=hidden[rec.spec], prefer=prefer[rec.spec]),
        )
        for n, (rec, _, _) in enumerate(usable)
        for t in [eg.events[rec.trigger_event_id]]
    ]


def _usable(
    eg: EventGraph,
    records: list[SilenceRecord],
    skipped: dict[str, int],
    doubts: dict[tuple[str, str], tuple[str, str]],
) -> list[tuple[SilenceRecord, bool, list[str]]]:
    """(record, exists, the response's artifacts) of the records an honest answer can rest on."""
    usable = []
    for rec in records:
        exists = rec.kind == "presence"
        evidence = sorted(eg.events[rec.response_event_id].artifacts) if exists else []
        if not exists and (rec.spec, rec.trigger_event_id) in doubts:
            skip(skipped, doubts[(rec.spec, rec.trigger_event_id)][0])
        elif not exists and not rec.expected_search_space:
            skip(skipped, "empty_search_space")
        elif exists and not evidence:
            skip(skipped, "no_response_artifacts")
        else:
            usable.append((rec, exists, evidence))
    return usable


def _candidate(
    spec: Any,
    rec: SilenceRecord,
    exists: bool,
    evidence: list[str],
    trigger: Any,
    ref: Any,
    artifacts: dict[str, tuple[str, int | None]],
    gates: list[str],
) -> Candidate:
    space = list(rec.expected_search_space)
    as_of = covering_as_of(
        rec.trigger_ts_us + rec.gap_microseconds, set(space) | set(evidence) | set(trigger.artifacts), artifacts
    )
    space_subs = {artifacts[a][0] for a in space if a in artifacts}
    factors = (len(space) >= 4) + (len(space_subs) > 1) + (len(trigger.artifacts) > 1)
    truth = SilenceTruth(
        exists=exists,
        spec=rec.spec,
        trigger_event_id=trigger.id,
        trigger_event_type=trigger.type,
        response_event_type=rec.response_type,
        response_event_id=rec.response_event_id,
        expected_search_space=space,
        expected_subsystems=list(rec.expected_subsystems),
        evidence_artifacts=evidence,
    )
    payload: dict[str, Any] = {
        "truth": truth,
        "actor": None,
        "as_of": to_utc(as_of),
        "gates": list(gates),
        "context_subsystems": sorted(
            set(rec.expected_subsystems) | {artifacts[a][0] for a in trigger.artifacts if a in artifacts}
        ),
        "event_type": trigger.type,
        "spec": rec.spec,
        "names": ref.values(),
        "refs": [ref.text()],
        "subjects": [ref.shown()],
        "slots": {
            "trigger": ref.text(),
            "response": with_article(f"'{humanize(rec.response_type)}' event"),
            "gap": format_gap(spec.max_gap_days),
        },
    }
    return Candidate(
        key=f"silence|{rec.spec}|{trigger.id}",
        bucket=rec.kind,
        label=exists,
        difficulty=difficulty_of(factors),
        event_type=trigger.type,
        group=rec.spec,
        payload=payload,
    )
