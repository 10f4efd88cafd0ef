"""Hand-built questions for runner tests (independent of the generator)."""

from __future__ import annotations


# ----------------------------------------------------------------------------- hand-built questions

PERSPECTIVE_SCHEMA = {
    "type": "object",
    "properties": {
        "could_actor_have_known": {"type": "boolean"},
        "evidence_artifacts": {"type": "array", "items": {"type": "string"}},
        "blocked_subsystems": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["could_actor_have_known"],
    "additionalProperties": False,
}


def perspective_questions(n: int, digest: str):
    """``n`` distinct Perspective questions on the tiny pack (alice, INC-42 resolution)."""
    from datetime import datetime, timezone

    from groundeval.questions.model import PerspectiveTruth, Question, QuestionSet, QuestionSetMeta

    truth = PerspectiveTruth(
        could_actor_have_known=True,
        target_event_id="e4",
        target_event_type="incident_resolved",
        target_artifacts=["JIRA-42", "dm-bob-alice", "slack-inc-42"],
        evidence_artifacts=["JIRA-42", "dm-bob-alice", "slack-inc-42"],
        blocked_subsystems=[],
    )
    qs = [
        Question(
            id=f"q{i:03d}",
            track="perspective",
            bucket="positive",
            difficulty="easy",
            text=f"Could alice have known INC-42 was resolved as of March 5 ({i})?",
            actor="alice",
            as_of=datetime(2026, 3, 5, i % 24, tzinfo=timezone.utc),
            gates=["horizon", "subsystem", "actor"],
            answer_schema=PERSPECTIVE_SCHEMA,
            ground_truth=truth,
        )
        for i in range(n)
    ]
    return QuestionSet(metadata=QuestionSetMeta(contract_digest=digest, pack="tiny", seed=0), questions=qs)


def write_question_set(qs, path) -> None:
    import json

    path.write_text(json.dumps(qs.model_dump(mode="json"), indent=2, sort_keys=True) + "\n", encoding="utf-8")
