"""Hand-built questions for runtime tests (a module of its own so tests import it by a unique name).

Questions are built by hand (not by the generator) so these tests pin the runtime's
behaviour for chosen actors, moments and gates.
"""

from __future__ import annotations

from datetime import datetime, timezone

from groundeval.questions.model import CounterfactualTruth, PerspectiveTruth, Question, SilenceTruth

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "could_actor_have_known": {"type": "boolean"},
        "evidence_artifacts": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["could_actor_have_known"],
    "additionalProperties": False,
}


def at(day: int, hour: int = 12) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=timezone.utc)


def make_question(
    track: str = "perspective",
    actor: str | None = "alice",
    as_of: datetime | None = None,
    gates: list[str] | None = None,
    qid: str | None = None,
    context_subsystems: list[str] | None = None,
) -> Question:
    as_of = as_of or at(5)
    if gates is None:
        gates = {"perspective": ["horizon", "subsystem", "actor"], "counterfactual": ["horizon"], "silence": []}[track]
    if track == "perspective":
        truth = PerspectiveTruth(
            could_actor_have_known=True,
            target_event_id="e4",
            target_event_type="incident_resolved",
            target_artifacts=["JIRA-42"],
            evidence_artifacts=["JIRA-42"],
            blocked_subsystems=[],
        )
    elif track == "counterfactual":
        truth = CounterfactualTruth(
            outcome_changed=True,
            causal_mechanism="resolution_triggers_postmortem",
            mechanism_direction="cause_to_effect",
            cause_event_id="e4",
            effect_event_id="e5",
            cause_event_type="incident_resolved",
            effect_event_type="postmortem_written",
        )
    else:
        truth = SilenceTruth(
            exists=False,
            spec="postmortem_after_resolution",
            trigger_event_id="e7",
            trigger_event_type="incident_resolved",
            response_event_type="postmortem_written",
            expected_search_space=["PM-41", "PM-42"],
            expected_subsystems=["confluence"],
        )
    return Question(
        id=qid or f"q-{track}-{actor}-{as_of:%d%H}",
        track=track,
        bucket="positive",
        difficulty="easy",
        text=f"Could {actor} have known about the INC-42 resolution as of {as_of:%B %d}?",
        actor=actor,
        as_of=as_of,
        gates=gates,
        answer_schema=ANSWER_SCHEMA,
        ground_truth=truth,
        context_subsystems=context_subsystems or [],
    )
