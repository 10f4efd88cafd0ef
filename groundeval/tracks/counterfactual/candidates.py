"""Counterfactual candidates: positives from causal edges, negatives from distractor pairs.

As-of is the latest of the effect time and the creation of every cause and effect
artifact, so all evidence is inside the horizon and the oracle can reach it. Pairs
whose cause or effect has no artifact in the corpus are skipped: nothing would let
an agent find those events.

Cause and effect are named by ``subjects.py`` so that whether they join cannot be
read off the text: per spec, every effect key whose values coincide with a value of
its cause in any sampled pair (join keys included) is hidden, and so are the effect's
own records (its witnesses, ``store/witness.py``); values coincide when equal or
when they share a number (``CTR-104`` and ``REQ-104``); cause keys naming an effect's
witness are hidden too.
The effect never shows its actors (their overlap with the cause's would hint at the
link). The premise is always that the cause event did not happen: a spec's premise
template is never shown (the original format's describe the cause as it happened, which
would contradict it). The outcome template is shown as an example of a different outcome
only when it has no placeholders, names no mechanism (the same words for every pair of the
spec) and is not the original format's (which states the effect as it happened); the
references always name the events.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ...contract.models import EvaluationConfig
from ...graph.build import EventGraph
from ...questions.balance import Candidate, difficulty_of
from ...questions.leakage import leaks
from ...questions.pool import covering_as_of, sample_size, seeded_sample, skip
from ...questions.subjects import Role, Subject, SubjectIndex, all_values, keyed_values, path_key
from ...store.store import to_utc
from ...store.witness import witnesses
from .model import NO_MECHANISM, CounterfactualTruth

DAY_US = 86_400_000_000


def pool(eg: EventGraph, ev: EvaluationConfig, seed: int) -> list[tuple[Any, bool]]:
    """A bounded, seeded sample of edges and distractors per (spec, polarity)."""
    pairs = [(e, True) for e in eg.causal_edges] + [(d, False) for d in eg.distractors]
    return seeded_sample(
        pairs,
        lambda p: (p[0].spec, p[1]),
        lambda p: f"{p[0].cause_event_id}\x1f{p[0].effect_event_id}",
        seed,
        "counterfactual",
        sample_size(ev),
    )


_DIGITS = re.compile(r"\d{2,}")


def _cores(values: Iterable[str]) -> set[str]:
    """The values and their digit runs (``INC-0042`` -> ``0042``, ``42``): two systems'
    ids for one case often share the number (``CTR-104`` and ``REQ-104``)."""
    out = set(values)
    for v in values:
        for run in _DIGITS.findall(v):
            out |= {run, run.lstrip("0") or "0"}
    return out


def _roles(pairs: list[tuple[Any, Any, Any, list[str]]], specs: dict[str, Any]) -> dict[str, tuple[Role, Role]]:
    """Per spec, the (cause, effect) roles: keys hidden on either side, decided over all sampled pairs."""
    hide: dict[str, tuple[set, set]] = {}
    for rec, cause, effect, effect_wit in pairs:
        c_hide, e_hide = hide.setdefault(rec.spec, (set(), set()))
        e_hide.update(k for j in specs[rec.spec].join if (k := path_key(j.effect)))
        c_cores = _cores(all_values(cause.record))
        for k, vals in keyed_values(effect.record).items():
            if _cores(vals) & c_cores or vals & set(effect_wit):
                e_hide.add(k)
        c_hide.update(k for k, vals in keyed_values(cause.record).items() if vals & set(effect_wit))
    prefer = {name: tuple(k for j in spec.join if (k := path_key(j.cause))) for name, spec in specs.items()}
    return {
        spec: (Role(hide=frozenset(c), prefer=prefer[spec]), Role(actors=False, hide=frozenset(e)))
        for spec, (c, e) in hide.items()
    }


def _plain(template: str | None, vocabulary: list[str]) -> str | None:
    """A template usable as prose: non-empty, without placeholders, not naming a mechanism."""
    if not template or not template.strip() or "{" in template or leaks(template, vocabulary=vocabulary):
        return None
    return template.strip()


def candidates(
    eg: EventGraph,
    ev: EvaluationConfig,
    subjects: SubjectIndex,
    artifacts: dict[str, tuple[str, int | None]],
    seed: int,
    pairs: list[tuple[Any, bool]] | None = None,
    vocabulary: list[str] = (),
    requests: list[tuple[Any, Subject, Role]] | None = None,
) -> tuple[list[Candidate], dict[str, int]]:
    """Candidates from ``pairs`` (default: :func:`pool`; ``requests``: their :func:`subject_requests`, if made)."""
    skipped: dict[str, int] = {}
    specs = {s.name: s for s in ev.causal_links}
    usable = _usable(eg, pool(eg, ev, seed) if pairs is None else pairs, artifacts, skipped)
    if requests is None:
        requests = _requests(usable, _roles([(rec, c, e, ew) for rec, _, c, e, ew in usable], specs))
    refs = subjects.resolve(requests)
    out = []
    for n, (rec, positive, cause, effect, _) in enumerate(usable):
        c_ref, e_ref = refs[(n, "c")], refs[(n, "e")]
        if c_ref is None or e_ref is None:
            skip(skipped, "ambiguous_reference")
            continue
        out.append(
            _candidate(
                specs[rec.spec],
                rec,
                positive,
                cause,
                effect,
                c_ref,
                e_ref,
                artifacts,
                ev.gates.get("counterfactual", []),
                vocabulary,
            )
        )
    return out, skipped


def subject_requests(
    eg: EventGraph, ev: EvaluationConfig, artifacts: dict[str, tuple[str, int | None]], pairs: list[tuple[Any, bool]]
) -> list[tuple[Any, Subject, Role]]:
    """The reference requests :func:`candidates` makes for ``pairs`` (to resolve with other tracks')."""
    usable = _usable(eg, pairs, artifacts, {})
    specs = {s.name: s for s in ev.causal_links}
    return _requests(usable, _roles([(rec, c, e, ew) for rec, _, c, e, ew in usable], specs))


def _usable(
    eg: EventGraph, pairs: list[tuple[Any, bool]], artifacts: dict[str, tuple[str, int | None]], skipped: dict[str, int]
) -> list[tuple[Any, bool, Any, Any, list[str]]]:
    """(record, positive, cause, effect, the effect's witnesses) of the pairs whose both
    events have artifacts (nothing else would let an agent find them)."""
    usable = []
    for rec, positive in pairs:
        cause, effect = eg.events[rec.cause_event_id], eg.events[rec.effect_event_id]
        if not cause.artifacts or not effect.artifacts:
            skip(skipped, "no_artifacts")
            continue
        usable.append((rec, positive, cause, effect, witnesses(effect.artifacts, effect.ts_us, artifacts)))
    return usable


def _requests(
    usable: list[tuple[Any, bool, Any, Any, list[str]]], roles: dict[str, tuple[Role, Role]]
) -> list[tuple[Any, Subject, Role]]:
    """The cause's and the effect's reference requests, keyed (n, 'c') and (n, 'e')."""
    requests = []
    for n, (rec, _, cause, effect, e_wit) in enumerate(usable):
        c_role, e_role = roles[rec.spec]
        requests.append(
            (
                (n, "c"),
                Subject(cause.id, cause.type, cause.ts_us, cause.record, tuple(cause.actors)),
                c_role.forbidding(e_wit),
            )
        )
        requests.append(
            (
                (n, "e"),
                Subject(effect.id, effect.type, effect.ts_us, effect.record, ()),
                e_role.forbidding([*e_wit, *all_values(cause.record)]),
            )
        )
    return requests


def _candidate(
    spec: Any,
    rec: Any,
    positive: bool,
    cause: Any,
    effect: Any,
    c_ref: Any,
    e_ref: Any,
    artifacts: dict[str, tuple[str, int | None]],
    gates: list[str],
    vocabulary: list[str],
) -> Candidate:
    evidence = sorted(set(cause.artifacts) | set(effect.artifacts))
    as_of = covering_as_of(max(effect.ts_us, cause.ts_us), evidence, artifacts)
    subs = sorted({artifacts[a][0] for a in evidence if a in artifacts})
    multi = positive and rec.multi_cause
    factors = multi + (effect.ts_us - cause.ts_us > DAY_US) + (len(subs) > 1)
    truth = CounterfactualTruth(
        outcome_changed=spec.outcome_changed if positive else False,
        causal_mechanism=spec.name if positive else NO_MECHANISM,
        mechanism_aliases=sorted(spec.mechanism_aliases) if positive else [],
        mechanism_direction="cause_to_effect" if positive else "no_causal_link",
        cause_event_id=cause.id,
        effect_event_id=effect.id,
        cause_event_type=cause.type,
        effect_event_type=effect.type,
        actors=sorted(set(cause.actors) | set(effect.actors)),
        evidence_artifacts=evidence,
        cause_artifacts=sorted(cause.artifacts),
        effect_artifacts=sorted(effect.artifacts),
        multi_cause=multi,
    )
    # The premise is always that the cause did not happen; a premise template is never a gloss of it
    # (the original's describe the cause as it happened: "had not happened (that is, <it happened>)").
    premise = f"{c_ref.text()} had not happened"
    outcome = None if spec.templates_as_happened else _plain(spec.outcome_template, vocabulary)
    payload: dict[str, Any] = {
        "truth": truth,
        "actor": None,
        "as_of": to_utc(as_of),
        "gates": list(gates),
        "context_subsystems": subs,
        "event_type": effect.type,
        "spec": spec.name,
        "names": sorted(set(c_ref.values()) | set(e_ref.values())),
        "refs": [c_ref.text(), e_ref.text()],
        "subjects": [c_ref.shown(), e_ref.shown()],
        "slots": {
            "premise": premise,
            "effect": e_ref.text(),
            "hint": f" For instance: {outcome.rstrip('.')}." if outcome else "",
        },
    }
    return Candidate(
        key=f"counterfactual|{rec.spec}|{cause.id}|{effect.id}",
        bucket="positive" if positive else "negative",
        label=truth.outcome_changed,
        difficulty=difficulty_of(factors),
        event_type=effect.type,
        group=spec.name,
        unique=effect.id,
        payload=payload,
    )
