"""Hypothesis strategies for groundeval's file formats.

Use them to property-test your own agents, wrappers and contracts: every drawn
value is *valid* (it loads, validates and means something), so a failure points at
the code under test, not at the generator. The adversarial traces break the agent
rules on purpose (gated fetches, hallucinated ids, invalid answers, calls after the
submit, unknown tools) in the shapes the runtime records them.

    >>> from hypothesis import given, settings
    >>> from groundeval.testing.strategies import traces
    >>> from groundeval.trace.model import Trace
    >>> @settings(max_examples=5, deadline=None)
    ... @given(traces())
    ... def test_roundtrip(trace):
    ...     assert Trace.model_validate_json(trace.model_dump_json()) == trace
    >>> test_roundtrip()

Stable API: :func:`contracts`, :func:`events`, :func:`artifacts`,
:func:`access_policies`, :func:`questions`, :func:`traces`, :func:`answers` and
:func:`write_pack`. Everything is built from hypothesis primitives, so shrinking
works and draws are reproducible from hypothesis's seed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable

import yaml
from hypothesis import strategies as st

from ..contract.models import (
    AccessPolicy,
    ActorSpec,
    CausalLinkSpec,
    EvaluationConfig,
    Manifest,
    RoleAssignment,
    RoleSpec,
    SearchSelector,
    SilencePairSpec,
    SubsystemGrant,
    Visibility,
)
from ..questions.answers import answer_schema
from ..questions.model import Question
from ..trace.model import Submission, ToolCall, Trace
from ..tracks import get as get_track
from ..tracks import names as track_names
from ..tracks.counterfactual import NO_MECHANISM, CounterfactualTruth
from ..tracks.perspective import PerspectiveTruth
from ..tracks.silence import SilenceTruth

__all__ = [
    "BASE_TIME",
    "Contract",
    "access_policies",
    "answers",
    "artifacts",
    "contracts",
    "events",
    "questions",
    "traces",
    "write_pack",
    "DEFAULT_ANSWER_SCHEMAS",
]

BASE_TIME = datetime(2026, 1, 5, tzinfo=timezone.utc)
SPAN_MINUTES = 60 * 24 * 45  # draws stay within ~six weeks of BASE_TIME

ACTOR_POOL = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi")
ROLE_POOL = ("engineer", "manager", "support", "hr_ops", "sales")
SUBSYSTEM_POOL = ("slack", "jira", "confluence", "zendesk", "zoom", "hr")
EVENT_TYPE_POOL = (
    "case_opened",
    "customer_escalation",
    "case_resolved",
    "review_written",
    "meeting_held",
    "note_added",
)
# The answer schemas the generator writes (the Counterfactual one enumerates mechanisms).
MECHANISMS = ("escalation_drives_resolution", "resolution_triggers_review")
DEFAULT_ANSWER_SCHEMAS: dict[str, dict[str, Any]] = {t: answer_schema(t, list(MECHANISMS)) for t in track_names()}

_ident = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
_words = st.lists(
    st.sampled_from(
        (
            "checkout",
            "payment",
            "outage",
            "retry",
            "customer",
            "review",
            "latency",
            "deploy",
            "rollback",
            "staffing",
            "escalated",
            "fixed",
        )
    ),
    min_size=1,
    max_size=8,
).map(" ".join)


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _at(minutes: int) -> datetime:
    return BASE_TIME + timedelta(minutes=minutes)


def _minutes(lo: int = 0, hi: int = SPAN_MINUTES) -> st.SearchStrategy[int]:
    return st.integers(min_value=lo, max_value=hi)


def _pool(values: Iterable[str] | None, default: Iterable[str]) -> list[str]:
    out = sorted(set(values if values is not None else default))
    if not out:
        raise ValueError("an empty pool cannot be drawn from")
    return out


# --------------------------------------------------------------------------- records


@st.composite
def events(
    draw,
    *,
    ids: st.SearchStrategy[str] | None = None,
    types: Iterable[str] | None = None,
    actors: Iterable[str] | None = None,
    artifact_ids: Iterable[str] | None = None,
    start: datetime = BASE_TIME,
    span_minutes: int = SPAN_MINUTES,
) -> dict[str, Any]:
    """One event record as it appears on a JSONL line (validates as ``Event``).

    ``artifact_ids`` values are single ids or lists; ``facts`` hold JSON scalars;
    sometimes an extra top-level key is kept, as users' logs carry domain fields.
    """
    actor_pool = _pool(actors, ACTOR_POOL)
    art_pool = _pool(artifact_ids, [f"DOC-{i}" for i in range(1, 6)])
    ts = start + timedelta(minutes=draw(_minutes(0, span_minutes)))
    refs: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(("ticket", "doc", "messages", "transcript")), unique=True, max_size=3)):
        if draw(st.booleans()):
            refs[key] = draw(st.sampled_from(art_pool))
        else:
            refs[key] = draw(st.lists(st.sampled_from(art_pool), min_size=1, max_size=3, unique=True))
    facts = draw(
        st.dictionaries(
            st.sampled_from(("case_id", "severity", "customer", "topic", "count")),
            st.one_of(_ident, st.integers(-1000, 1000), st.booleans()),
            max_size=4,
        )
    )
    record: dict[str, Any] = {
        "id": draw(ids) if ids is not None else "ev-" + draw(_ident),
        "type": draw(st.sampled_from(_pool(types, EVENT_TYPE_POOL))),
        "timestamp": _iso(ts),
        "actors": draw(st.lists(st.sampled_from(actor_pool), unique=True, max_size=3)),
        "artifact_ids": refs,
        "facts": facts,
    }
    if draw(st.booleans()):
        record["region"] = draw(st.sampled_from(("eu", "us", "apac")))
    return record


@st.composite
def artifacts(
    draw,
    *,
    ids: st.SearchStrategy[str] | None = None,
    subsystems: Iterable[str] | None = None,
    actors: Iterable[str] | None = None,
    roles: Iterable[str] | None = None,
    start: datetime = BASE_TIME,
    span_minutes: int = SPAN_MINUTES,
) -> dict[str, Any]:
    """One artifact record (validates as ``Artifact``): id, subsystem, a creation time
    under one of the three accepted keys, title, text fields and sometimes an inline
    ``visibility`` restriction."""
    actor_pool = _pool(actors, ACTOR_POOL)
    created = start + timedelta(minutes=draw(_minutes(0, span_minutes)))
    record: dict[str, Any] = {
        "id": draw(ids) if ids is not None else "DOC-" + draw(_ident),
        "subsystem": draw(st.sampled_from(_pool(subsystems, SUBSYSTEM_POOL))),
        draw(st.sampled_from(("timestamp", "created_at", "date"))): _iso(created),
        "title": draw(_words),
        "actors": draw(st.lists(st.sampled_from(actor_pool), unique=True, max_size=3)),
        "body": draw(_words),
    }
    if draw(st.booleans()):
        record["tags"] = draw(st.lists(_ident, max_size=3))
    if draw(st.integers(0, 3)) == 0:
        record["visibility"] = draw(_visibility(actor_pool, _pool(roles, ROLE_POOL))).model_dump()
    return record


def _visibility(actors: list[str], roles: list[str]) -> st.SearchStrategy[Visibility]:
    return st.builds(
        Visibility,
        actors=st.lists(st.sampled_from(actors), unique=True, max_size=2).map(sorted),
        roles=st.lists(st.sampled_from(roles), unique=True, max_size=1).map(sorted),
    )


# --------------------------------------------------------------------------- access policy


@st.composite
def _windows(draw, roles: list[str]) -> list[RoleAssignment]:
    """Non-overlapping role windows: optional hire, role changes, optional departure."""
    n = draw(st.integers(1, 3))
    hired, departs = draw(st.booleans()), draw(st.booleans())
    cuts = sorted(
        draw(
            st.lists(
                _minutes(60, SPAN_MINUTES - 60),
                min_size=n - 1 + hired + departs,
                max_size=n - 1 + hired + departs,
                unique=True,
            )
        )
    )
    bounds: list[datetime | None] = [None] + [_at(m) for m in cuts] + [None]
    if hired:
        bounds = bounds[1:]
    if departs:
        bounds = bounds[:-1]
    return [RoleAssignment(role=draw(st.sampled_from(roles)), since=bounds[i], until=bounds[i + 1]) for i in range(n)]


@st.composite
def _grant(draw, subsystem: str) -> SubsystemGrant:
    kind = draw(st.sampled_from(("open", "open", "since", "until", "both")))
    a, b = sorted(draw(st.lists(_minutes(), min_size=2, max_size=2, unique=True)))
    since = _at(a) if kind in ("since", "both") else None
    until = _at(b) if kind in ("until", "both") else None
    return SubsystemGrant(name=subsystem, since=since, until=until)


@st.composite
def access_policies(
    draw,
    *,
    actors: Iterable[str] | None = None,
    roles: Iterable[str] | None = None,
    subsystems: Iterable[str] | None = None,
    event_types: Iterable[str] | None = None,
    artifact_ids: Iterable[str] | None = None,
) -> AccessPolicy:
    """An access policy: actors with role windows (hires, role changes, departures, a
    system bot), roles with possibly time-bounded subsystem grants and broadcast event
    types, and per-artifact restrictions."""
    actor_names = _pool(actors, ACTOR_POOL)
    role_names = _pool(roles, ROLE_POOL)
    subs = _pool(subsystems, SUBSYSTEM_POOL)
    types = _pool(event_types, EVENT_TYPE_POOL)
    role_specs = {}
    for role in role_names:
        granted = draw(st.lists(st.sampled_from(subs), unique=True, max_size=len(subs)))
        role_specs[role] = RoleSpec(
            subsystems=[draw(_grant(s)) for s in sorted(granted)],
            broadcast_event_types=sorted(draw(st.lists(st.sampled_from(types), unique=True, max_size=2))),
            external=draw(st.integers(0, 5)) == 0,
        )
    actor_specs = {a: ActorSpec(roles=draw(_windows(role_names))) for a in actor_names}
    if draw(st.booleans()):
        actor_specs["bot"] = ActorSpec(roles=[RoleAssignment(role=draw(st.sampled_from(role_names)))], system=True)
    restrictions: dict[str, Visibility] = {}
    if artifact_ids is not None:
        for aid in draw(st.lists(st.sampled_from(_pool(artifact_ids, ["x"])), unique=True, max_size=3)):
            restrictions[aid] = draw(_visibility(actor_names, role_names))
    return AccessPolicy(actors=actor_specs, roles=role_specs, restrictions=dict(sorted(restrictions.items())))


# --------------------------------------------------------------------------- contracts


@dataclass(frozen=True)
class Contract:
    """A whole evaluation contract in memory: the manifest and the JSON-ready records.

    ``write_pack`` lays it out as a pack folder that ``Store.open`` loads.
    """

    manifest: Manifest
    events: list[dict[str, Any]] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def event_ids(self) -> list[str]:
        return sorted(e["id"] for e in self.events)

    @property
    def artifact_ids(self) -> list[str]:
        return sorted(a["id"] for a in self.artifacts)


@st.composite
def _case(draw, n: int, subs: dict[str, str], actors: list[str], gaps: tuple[float, float]):
    """One case's lifecycle: opened, maybe escalated, maybe resolved, maybe reviewed."""
    case_id = f"C{n}"
    t0 = draw(_minutes(0, SPAN_MINUTES // 2))
    who = draw(st.lists(st.sampled_from(actors), min_size=1, max_size=2, unique=True))
    evs: list[tuple[int, str, dict[str, Any], list[str]]] = []
    arts: list[tuple[str, str, int, list[str]]] = [(f"TKT-{case_id}", subs["tracker"], t0 + 1, who)]
    refs = {"ticket": f"TKT-{case_id}"}
    if draw(st.booleans()):
        arts.append((f"chat-{case_id}", subs["chat"], t0 + 2, who))
        refs["channel"] = f"chat-{case_id}"
    evs.append((t0, "case_opened", refs, who))
    t = t0
    if draw(st.booleans()):
        t = t + draw(st.integers(5, 60 * 24 * 3))
        agent = draw(st.lists(st.sampled_from(actors), min_size=1, max_size=1))
        arts.append((f"ZD-{case_id}", subs["desk"], t + 1, agent))
        evs.append((t, "customer_escalation", {"ticket": f"ZD-{case_id}"}, agent))
    if draw(st.booleans()):
        # Gaps straddle the specs' max gap, so some pairs join and some fall outside.
        t = t + draw(st.integers(10, int(gaps[0] * 1.5 * 24 * 60)))
        evs.append((t, "case_resolved", {"ticket": f"TKT-{case_id}"}, who[:1]))
        if draw(st.booleans()):
            t = t + draw(st.integers(10, int(gaps[1] * 1.5 * 24 * 60)))
            author = draw(st.lists(st.sampled_from(actors), min_size=1, max_size=1))
            arts.append((f"REV-{case_id}", subs["docs"], t + 3, author))
            evs.append((t, "review_written", {"doc": f"REV-{case_id}"}, author))
    return case_id, evs, arts


_RawEvent = tuple[int, str, dict[str, Any], list[str], dict[str, Any]]
_RawArtifact = tuple[str, str, int, list[str]]


def _raw_log(
    draw, subs: dict[str, str], actors: list[str], gaps: tuple[float, float], max_cases: int, max_noise: int
) -> tuple[list[_RawEvent], list[_RawArtifact]]:
    """Cases, maybe a review of a case that never happened, and noise (meetings, restricted notes)."""
    raw_events: list[_RawEvent] = []
    raw_arts: list[_RawArtifact] = []
    for n in range(1, draw(st.integers(1, max_cases)) + 1):
        case_id, evs, arts = draw(_case(n, subs, actors, gaps))
        raw_events += [(t, ty, refs, who, {"case_id": case_id}) for t, ty, refs, who in evs]
        raw_arts += arts
    if draw(st.booleans()):  # a review of a case that never happened: a Silence distractor
        t = draw(_minutes())
        raw_arts.append(("REV-C0", subs["docs"], t + 3, actors[:1]))
        raw_events.append((t, "review_written", {"doc": "REV-C0"}, actors[:1], {"case_id": "C0"}))
    for k in range(1, draw(st.integers(0, max_noise)) + 1):
        t = draw(_minutes())
        who = draw(st.lists(st.sampled_from(actors), min_size=1, max_size=3, unique=True))
        if draw(st.booleans()):
            raw_arts.append((f"mtg-{k}", subs["meetings"], t + 30, who))
            raw_events.append((t, "meeting_held", {"transcript": f"mtg-{k}"}, who, {"topic": draw(_words)}))
        else:
            raw_arts.append((f"NOTE-{k}", subs["private"], t, who[:1]))
            raw_events.append((t, "note_added", {"file": f"NOTE-{k}"}, who[:1], {"topic": draw(_words)}))
    return raw_events, raw_arts


def _artifact_records(draw, raw_arts: list[_RawArtifact], actors: list[str], roles: list[str]) -> list[dict[str, Any]]:
    records = []
    for aid, sub, t, who in sorted(raw_arts):
        rec: dict[str, Any] = {
            "id": aid,
            "subsystem": sub,
            "timestamp": _iso(_at(t)),
            "title": f"{aid}: " + draw(_words),
            "actors": sorted(who),
            "body": draw(_words),
        }
        if aid.startswith("NOTE-") and draw(st.booleans()):
            rec["visibility"] = draw(_visibility(actors, roles)).model_dump()
        records.append(rec)
    return records


def _specs(
    draw, used_types: set[str], subs: dict[str, str], gap_cause: float, gap_review: float
) -> tuple[list[CausalLinkSpec], list[SilencePairSpec]]:
    """Specs that only name event types and subsystems the log and corpus have (else the verifier errs)."""
    links = []
    if {"customer_escalation", "case_resolved"} <= used_types and draw(st.booleans()):
        links.append(
            CausalLinkSpec(
                name="escalation_drives_resolution",
                cause_event_type="customer_escalation",
                effect_event_type="case_resolved",
                max_gap_days=gap_cause,
                join=[{"cause": "facts.case_id", "effect": "facts.case_id"}],
                mechanism_aliases=["customer pressure"],
                premise_template="the escalation about {facts.case_id} had not happened",
                outcome_template="the case would have been resolved later",
            )
        )
    has_reviews = {"case_resolved", "review_written"} <= used_types
    if has_reviews and draw(st.booleans()):
        links.append(
            CausalLinkSpec(
                name="resolution_triggers_review",
                cause_event_type="case_resolved",
                effect_event_type="review_written",
                max_gap_days=gap_review,
                join=[{"cause": "facts.case_id", "effect": "facts.case_id"}],
                mechanism_aliases=["review policy"],
            )
        )
    pairs = (
        []
        if not has_reviews
        else [
            SilencePairSpec(
                name="review_after_resolution",
                trigger_event_type="case_resolved",
                response_event_type="review_written",
                max_gap_days=gap_review,
                join=[{"trigger": "facts.case_id", "response": "facts.case_id"}],
                search_space_subsystems=[subs["docs"]],
                search_space_selectors=[
                    SearchSelector(subsystem=subs["docs"], id_template="REV-{facts.case_id}"),
                    SearchSelector(subsystem=subs["docs"], query_template="review {facts.case_id}"),
                ],
            )
        ]
    )
    return links, pairs


@st.composite
def contracts(draw, *, max_cases: int = 5, max_noise: int = 4) -> Contract:
    """A valid contract: cases that open, escalate, resolve and get reviewed (or not),
    meetings and restricted notes as noise, an access policy with time windows over
    the corpus's subsystems, causal link specs joined on ``facts.case_id`` and a
    silence pair whose search space is the review's id and a ranked query. Specs
    appear when the log has their event types, so the verifier finds no errors.
    Timestamps are UTC (``Z``)."""
    actors = sorted(draw(st.lists(st.sampled_from(ACTOR_POOL), min_size=2, max_size=5, unique=True)))
    chosen = draw(st.permutations(SUBSYSTEM_POOL))
    subs = {
        "tracker": chosen[0],
        "chat": chosen[1],
        "docs": chosen[2],
        "desk": chosen[3],
        "meetings": chosen[4],
        "private": chosen[5],
    }
    gap_cause, gap_review = draw(st.sampled_from((1.0, 2.0, 5.0))), draw(st.sampled_from((1.0, 3.0, 7.0)))
    raw_events, raw_arts = _raw_log(draw, subs, actors, (gap_cause, gap_review), max_cases, max_noise)
    raw_events.sort(key=lambda e: (e[0], e[1]))
    event_records = [
        {
            "id": f"ev-{i:04d}",
            "type": ty,
            "timestamp": _iso(_at(t)),
            "actors": sorted(who),
            "artifact_ids": refs,
            "facts": facts,
        }
        for i, (t, ty, refs, who, facts) in enumerate(raw_events, start=1)
    ]
    roles = sorted(draw(st.lists(st.sampled_from(ROLE_POOL), min_size=1, max_size=4, unique=True)))
    artifact_records = _artifact_records(draw, raw_arts, actors, roles)
    used_types = {e["type"] for e in event_records}
    used_subsystems = sorted({a["subsystem"] for a in artifact_records})
    policy = draw(
        access_policies(
            actors=actors,
            roles=roles,
            subsystems=used_subsystems,
            event_types=sorted(used_types),
            artifact_ids=[a["id"] for a in artifact_records],
        )
    )
    links, pairs = _specs(draw, used_types, subs, gap_cause, gap_review)
    humans = sorted(a for a, spec in policy.actors.items() if not spec.system)
    manifest = Manifest(
        name="drawn-" + draw(_ident),
        timezone=draw(st.sampled_from(("UTC", "Europe/Berlin", "America/New_York"))),
        access=policy,
        evaluation=EvaluationConfig(
            causal_links=links,
            silence_pairs=pairs,
            perspective_actors=sorted(draw(st.lists(st.sampled_from(humans), unique=True, max_size=len(humans)))),
            seed=draw(st.integers(0, 2**31 - 1)),
        ),
    )
    return Contract(manifest=manifest, events=event_records, artifacts=artifact_records)


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


def write_pack(contract: Contract, path: str | Path, *, layout: str = "folders") -> Path:
    """Write ``contract`` as a pack folder (``groundeval.yaml``, ``events.jsonl`` and
    ``artifacts/<subsystem>/<id>.json``, or one ``artifacts.jsonl`` with
    ``layout="jsonl"``) in the order of its lists; returns the folder."""
    if layout not in ("folders", "jsonl"):
        raise ValueError(f"unknown layout {layout!r}")
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    data = contract.manifest.model_dump(mode="json", exclude_none=True)
    data["sources"] = {"events": "events.jsonl", "artifacts": "artifacts" if layout == "folders" else "artifacts.jsonl"}
    (root / "groundeval.yaml").write_text(yaml.safe_dump(data, sort_keys=True, allow_unicode=True), encoding="utf-8")
    (root / "events.jsonl").write_text("".join(_dump(e) + "\n" for e in contract.events), encoding="utf-8")
    if layout == "folders":
        for rec in contract.artifacts:
            folder = root / "artifacts" / rec["subsystem"]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{rec['id']}.json").write_text(_dump(rec) + "\n", encoding="utf-8")
        (root / "artifacts").mkdir(exist_ok=True)
    else:
        (root / "artifacts.jsonl").write_text("".join(_dump(a) + "\n" for a in contract.artifacts), encoding="utf-8")
    return root


# --------------------------------------------------------------------------- questions


# The runtime's wording for refusals and ends (kept in sync with groundeval.runtime.episode):
# one refusal for gated and unknown ids alike.
REFUSAL = "No artifact with this id is available to you for this question."
SUBSYSTEM_REFUSAL = "Access denied: this subsystem is not available to you for this question."
SCHEMA_MISMATCH = "the answer does not match the answer schema"
ENDED = "the episode has ended: an answer was already accepted"

_artifact_id = st.sampled_from(("TKT-C1", "chat-C1", "ZD-C1", "REV-C1", "TKT-C2", "mtg-1", "NOTE-1"))
_event_id = st.integers(1, 40).map(lambda i: f"ev-{i:04d}")


def _qid(*parts: Any) -> str:
    return "q_" + hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


@st.composite
def _perspective(draw, bucket: str):
    targets = sorted(draw(st.lists(_artifact_id, min_size=1, max_size=3, unique=True)))
    known = bucket == "positive"
    evidence = sorted(draw(st.lists(st.sampled_from(targets), min_size=1, unique=True))) if known else []
    blocked = (
        sorted(draw(st.lists(st.sampled_from(SUBSYSTEM_POOL), min_size=1, max_size=2, unique=True)))
        if bucket == "negative_permission"
        else []
    )
    actor = draw(st.sampled_from(ACTOR_POOL))
    truth = PerspectiveTruth(
        could_actor_have_known=known,
        target_event_id=draw(_event_id),
        target_event_type=draw(st.sampled_from(EVENT_TYPE_POOL)),
        target_artifacts=targets,
        evidence_artifacts=evidence,
        blocked_subsystems=blocked,
        role_at_as_of=[draw(st.sampled_from(ROLE_POOL))],
    )
    text = f"Based only on what {actor} could access, could {actor} have known about {truth.target_event_id}?"
    return actor, truth, text


@st.composite
def _counterfactual(draw, bucket: str):
    cause, effect = sorted(draw(st.lists(_event_id, min_size=2, max_size=2, unique=True)))
    positive = bucket == "positive"
    cause_arts = sorted(draw(st.lists(_artifact_id, max_size=2, unique=True)))
    effect_arts = sorted(draw(st.lists(_artifact_id, min_size=1, max_size=2, unique=True)))
    truth = CounterfactualTruth(
        outcome_changed=positive,
        causal_mechanism="resolution_triggers_review" if positive else NO_MECHANISM,
        mechanism_aliases=["review policy"] if positive else [],
        mechanism_direction="cause_to_effect" if positive else "no_causal_link",
        cause_event_id=cause,
        effect_event_id=effect,
        cause_event_type="case_resolved",
        effect_event_type="review_written",
        actors=sorted(draw(st.lists(st.sampled_from(ACTOR_POOL), max_size=3, unique=True))),
        evidence_artifacts=sorted(set(cause_arts) | set(effect_arts)),
        cause_artifacts=cause_arts,
        effect_artifacts=effect_arts,
    )
    text = f"If {cause} had happened earlier, would {effect} have happened sooner?"
    return None, truth, text


@st.composite
def _silence(draw, bucket: str):
    exists = bucket == "presence"
    space = sorted(draw(st.lists(_artifact_id, min_size=1, max_size=3, unique=True)))
    response = draw(_event_id) if exists else None
    truth = SilenceTruth(
        exists=exists,
        spec="review_after_resolution",
        trigger_event_id=draw(_event_id),
        trigger_event_type="case_resolved",
        response_event_type="review_written",
        response_event_id=response,
        expected_search_space=space,
        expected_subsystems=["confluence"],
        evidence_artifacts=sorted(draw(st.lists(st.sampled_from(space), min_size=1, unique=True))) if exists else [],
    )
    return None, truth, f"Was a review written after {truth.trigger_event_id}?"


# Truth strategies by truth model: the tracks questions() can draw.
_TRUTHS = {PerspectiveTruth: _perspective, CounterfactualTruth: _counterfactual, SilenceTruth: _silence}


def _drawable() -> tuple[str, ...]:
    return tuple(t for t in track_names() if get_track(t).truth_model in _TRUTHS)


@st.composite
def questions(draw, track: str | None = None) -> Question:
    """A question with ground truth consistent with its bucket (a positive Perspective
    question has visible evidence, a Silence absence has no response, ...)."""
    drawable = _drawable()
    if track is not None and track not in drawable:
        raise ValueError(f"unknown track {track!r}; expected one of {', '.join(drawable)}")
    track = track or draw(st.sampled_from(drawable))
    spec = get_track(track)
    bucket = draw(st.sampled_from(spec.buckets))
    actor, truth, text = draw(_TRUTHS[spec.truth_model](bucket))
    as_of = _at(draw(_minutes()))
    difficulty = draw(st.sampled_from(("easy", "medium", "hard")))
    return Question(
        id=_qid(track, bucket, text, as_of, truth.model_dump(mode="json")),
        track=track,
        bucket=bucket,
        difficulty=difficulty,
        text=text,
        actor=actor,
        as_of=as_of,
        gates=list(spec.default_gates),
        answer_schema=DEFAULT_ANSWER_SCHEMAS[track],
        ground_truth=truth,
        template_id=f"{track}.{bucket}",
        context_subsystems=list(getattr(truth, "expected_subsystems", [])),
    )


# --------------------------------------------------------------------------- answers


def _value_for(prop: dict[str, Any], ids: list[str] | None = None) -> st.SearchStrategy[Any]:
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    kind = prop.get("type")
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(-5, 5)
    if kind == "number":
        return st.floats(0, 1)
    if kind == "array":
        return st.lists(_value_for(prop.get("items", {"type": "string"}), ids), max_size=3, unique=True).map(sorted)
    if kind == "object":
        return st.just({})
    if ids:
        return st.sampled_from(ids)
    return st.one_of(_artifact_id, _event_id, _ident)


@st.composite
def answers(draw, question: Question, *, valid: bool = True, ids: Iterable[str] | None = None) -> Any:
    """An answer to ``question``: with ``valid=True`` one that satisfies its answer
    schema (sometimes the correct one, taken from the truth); with ``valid=False`` one
    that breaks it (a missing key, a wrong type or not an object at all). String
    fields draw from ``ids`` when given (e.g. the artifacts the agent saw)."""
    id_pool = sorted(set(ids)) if ids is not None else None
    schema = question.answer_schema or {}
    props: dict[str, Any] = schema.get("properties", {})
    required = list(schema.get("required", sorted(props)))
    truth = question.ground_truth.model_dump(mode="json")
    use_truth = draw(st.booleans())
    answer = {}
    for key in sorted(props):
        if key not in required and not draw(st.booleans()):
            continue
        answer[key] = truth[key] if use_truth and key in truth else draw(_value_for(props[key], id_pool))
    if valid:
        return answer
    breakage = draw(st.sampled_from(("missing", "type", "not_object")))
    if breakage == "missing" and required:
        answer.pop(draw(st.sampled_from(sorted(required))), None)
        return answer
    if breakage == "type" and props:
        key = draw(st.sampled_from(sorted(props)))
        answer[key] = {"unexpected": [1, 2]} if props[key].get("type") != "object" else "text"
        return answer
    return draw(st.one_of(st.text(max_size=20), st.integers(), st.none(), st.lists(st.integers(), max_size=2)))


# --------------------------------------------------------------------------- traces


@dataclass
class _Builder:
    """Accumulates calls with consecutive indices, the way the runtime records them."""

    calls: list[ToolCall] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)
    final: dict[str, Any] | None = None

    def add(self, tool: str, arguments: dict[str, Any], status: str, *, result_ids=(), flags=(), error=None) -> int:
        index = len(self.calls)
        self.calls.append(
            ToolCall(
                index=index,
                tool=tool,
                arguments=arguments,
                status=status,
                result_ids=list(result_ids),
                flags=list(flags),
                error=error,
            )
        )
        return index


@st.composite
def _hallucinated_id(draw) -> str:
    return draw(st.one_of(st.text(min_size=1, max_size=12), _ident.map(lambda s: "ZZ-" + s)))


def _search(draw, q: Question, known: list[str], b: _Builder) -> None:
    args: dict[str, Any] = {"query": draw(_words)}
    if draw(st.booleans()):
        args["subsystem"] = draw(st.sampled_from(SUBSYSTEM_POOL))
    b.add(
        "search_artifacts",
        args,
        "ok",
        result_ids=sorted(draw(st.lists(st.sampled_from(known), max_size=4, unique=True))),
    )


def _fetch(draw, q: Question, known: list[str], b: _Builder) -> None:
    aid = draw(st.sampled_from(known))
    b.add("fetch_artifact", {"artifact_id": aid}, "ok", result_ids=[aid])


def _gated(draw, q: Question, known: list[str], b: _Builder) -> None:
    flags = draw(st.lists(st.sampled_from(q.gates), min_size=1, unique=True))
    b.add(
        "fetch_artifact",
        {"artifact_id": draw(st.sampled_from(known))},
        "denied",
        flags=[g for g in q.gates if g in flags],
        error=REFUSAL,
    )


def _gated_search(draw, q: Question, known: list[str], b: _Builder) -> None:
    """Naming a subsystem the role lacks: flagged, no hits."""
    b.add(
        "search_artifacts",
        {"query": draw(_words), "subsystem": draw(st.sampled_from(SUBSYSTEM_POOL))},
        "denied",
        flags=["subsystem"],
        error=SUBSYSTEM_REFUSAL,
    )


def _hallucinated(draw, q: Question, known: list[str], b: _Builder) -> None:
    b.add("fetch_artifact", {"artifact_id": draw(_hallucinated_id())}, "not_found", error=REFUSAL)


def _unknown_tool(draw, q: Question, known: list[str], b: _Builder) -> None:
    b.add(
        draw(st.sampled_from(("delete_artifact", "read_ground_truth", "shell", ""))),
        draw(st.dictionaries(_ident, _ident, max_size=2)),
        "invalid",
        error="unknown tool",
    )


def _invalid_submit(draw, q: Question, known: list[str], b: _Builder) -> None:
    """An invalid submission: recorded, the episode goes on."""
    answer = draw(answers(q, valid=False))
    index = b.add("submit_answer", {"answer": answer}, "invalid", error=SCHEMA_MISMATCH)
    b.submissions.append(Submission(call_index=index, answer=answer, valid=False, errors=["$: " + SCHEMA_MISMATCH]))


_STEPS = {
    "search": _search,
    "fetch": _fetch,
    "gated": _gated,
    "gated_search": _gated_search,
    "hallucinated": _hallucinated,
    "unknown_tool": _unknown_tool,
    "invalid_submit": _invalid_submit,
}


def _answer_steps(draw, q: Question, known: list[str], adversarial: bool, b: _Builder) -> None:
    """The accepted answer (adversarially: citing a hallucinated or gated id), then, adversarially,
    calls after it (``invalid``)."""
    answer = draw(answers(q, valid=True, ids=None if adversarial else known))
    cited = answer.get("evidence_artifacts", []) if isinstance(answer, dict) else []
    if adversarial and isinstance(answer, dict) and "evidence_artifacts" in answer and draw(st.booleans()):
        cited = sorted(set(cited) | {draw(_hallucinated_id())})
        answer["evidence_artifacts"] = cited
    index = b.add("submit_answer", {"answer": answer}, "ok")
    # citations are judged on all gates when there is an actor, else on time only
    citation_gates = ["horizon", "subsystem", "actor"] if q.actor else ["horizon"]
    citation_flags: dict[str, list[str] | None] = {}
    for aid in sorted(set(cited)):
        if aid not in known:
            citation_flags[aid] = None
        elif adversarial and draw(st.integers(0, 3)) == 0:
            citation_flags[aid] = [draw(st.sampled_from(citation_gates))]
        else:
            citation_flags[aid] = []
    b.submissions.append(Submission(call_index=index, answer=answer, valid=True, citation_flags=citation_flags))
    b.final = answer
    if adversarial:
        for tool in draw(
            st.lists(st.sampled_from(("fetch_artifact", "search_artifacts", "submit_answer")), max_size=2)
        ):
            b.add(tool, {}, "invalid", error=ENDED)


@st.composite
def traces(draw, question: Question | None = None, adversarial: bool = True, mode: str = "tool") -> Trace:
    """A trace of one episode on ``question`` (drawn when None).

    Honest steps: searches returning known ids, fetches inside the gates, one valid
    submission. With ``adversarial=True`` the agent may also fetch gated artifacts
    (``denied``, flagged with some of the question's gates) or name a forbidden
    subsystem in a search, cite or fetch hallucinated ids (``not_found``), submit
    invalid answers, call tools after its final answer or call unknown tools (all
    ``invalid``), cite gated evidence, or never answer.
    """
    q = question if question is not None else draw(questions())
    truth = q.ground_truth.model_dump(mode="json")
    known = sorted(
        set(
            truth.get("evidence_artifacts", [])
            + truth.get("target_artifacts", [])
            + truth.get("expected_search_space", [])
        )
        | {"TKT-C1"}
    )
    b = _Builder()
    kinds = ["search", "fetch"]
    if adversarial:
        kinds += ["hallucinated", "invalid_submit", "unknown_tool"] + (["gated"] if q.gates else [])
        kinds += ["gated_search"] if "subsystem" in q.gates else []
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=8)):
        _STEPS[kind](draw, q, known, b)
    answered = not adversarial or draw(st.integers(0, 4)) > 0
    if answered:
        _answer_steps(draw, q, known, adversarial, b)
    status = "completed" if answered else draw(st.sampled_from(("no_answer", "step_budget", "timeout")))
    return Trace(
        question_id=q.id,
        track=q.track,
        mode=mode,
        actor=q.actor,
        as_of=q.as_of,
        contract_digest=draw(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)),
        agent=draw(st.sampled_from(("drawn", "oracle", "module:factory"))),
        calls=b.calls,
        context_ids=sorted(draw(st.lists(st.sampled_from(known), max_size=4, unique=True)))
        if mode == "context"
        else [],
        submissions=b.submissions,
        final_answer=b.final,
        status=status,
    )
