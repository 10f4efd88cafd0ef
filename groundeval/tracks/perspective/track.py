"""Perspective — "based only on what Morgan could access as of March 5, could Morgan
have known X?"

Truth comes from the visibility cone at the question's actor and as-of; candidates are
built by ``candidates.py``. Buckets: positive, permission-negative,
temporal-negative (ratios from ``evaluation.perspective``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...questions.answers import RATIONALE, STR_LIST
from ...scoring import answers as A
from ..base import BaseTrack, GenerationContext, TrackScore
from .model import NAME, PerspectiveAnswer, PerspectiveTruth

if TYPE_CHECKING:
    from ...contract.models import EvaluationConfig, ScoringConfig
    from ...scoring.score import PathFacts

__all__ = ["ANSWER_WEIGHTS", "TRACK", "TRAJ_WEIGHTS", "Perspective"]

# Component weights (documented in docs/scoring.md).
ANSWER_WEIGHTS = {"known": 0.6, "blocked_subsystems": 0.2, "evidence_named": 0.2}
TRAJ_WEIGHTS = {"evidence_coverage": 0.5, "citation_grounding": 0.2, "gate_discipline": 0.3}


class Perspective(BaseTrack):
    name = NAME
    truth_model = PerspectiveTruth
    answer_model = PerspectiveAnswer
    buckets = ("positive", "negative_permission", "negative_temporal")
    yes_buckets = ("positive",)
    label_field = "could_actor_have_known"
    templates = (
        (
            "perspective.1",
            "Based only on the records {actor} could open at {as_of}, could {actor} have known about {target}?",
        ),
        (
            "perspective.2",
            "Using only the information {actor} had access to at {as_of}, could {actor} have learned of {target}?",
        ),
        (
            "perspective.3",
            "At {as_of}, could {actor} have found out about {target} from the sources {actor} could read then?",
        ),
    )
    default_gates = ("horizon", "subsystem", "actor")
    default_weights = (0.40, 0.60)
    # A Perspective question asks what its actor could know from records: a fetch lists
    # only the events the document records (a ticket written before an event cannot tell of it).
    witnessed_events_only = True

    def cap(self, ev: EvaluationConfig) -> int:
        return ev.max_perspective_questions

    def bucket_ratios(self, ev: EvaluationConfig) -> dict[str, float]:
        p = ev.perspective
        return {
            "positive": p.positive,
            "negative_permission": p.negative_permission,
            "negative_temporal": p.negative_temporal,
        }

    def answer_schema(self, mechanisms: Sequence[str] = ()) -> dict[str, Any]:
        props = {
            "could_actor_have_known": {"type": "boolean"},
            "evidence_artifacts": STR_LIST,
            "blocked_subsystems": STR_LIST,
        }
        return {
            "type": "object",
            "properties": {**props, "rationale": RATIONALE},
            "required": ["could_actor_have_known"],
            "additionalProperties": False,
        }

    def truth_ids(self, truth: PerspectiveTruth) -> list[str]:
        return [truth.target_event_id, *truth.target_artifacts]

    def prepare(self, ctx: GenerationContext, pool: Any) -> Any:
        """The labelled, sampled targets (``candidates.pool``)."""
        from .candidates import pool as targets

        return targets(ctx.sql, ctx.ev, ctx.seed)

    def subject_requests(self, ctx: GenerationContext, pool: Any) -> list[tuple[Any, Any, Any]]:
        from .candidates import subject_requests

        return subject_requests(pool)

    def candidates(self, ctx: GenerationContext, pool: Any) -> tuple[list[Any], dict[str, int]]:
        from .candidates import candidates

        return candidates(ctx.sql, ctx.ev, ctx.subjects, ctx.seed, pool, ctx.requests.get(self.name))

    def score(
        self,
        question: Any,
        truth: PerspectiveTruth,
        answer: dict[str, Any] | None,
        path: PathFacts,
        v: float,
        config: ScoringConfig,
    ) -> TrackScore:
        evidence = set(truth.evidence_artifacts)
        known = A.boolean(answer, "could_actor_have_known")
        correct = known is not None and known == truth.could_actor_have_known
        named = A.id_list(answer, "evidence_artifacts")
        comps = {
            "known": float(correct),
            "blocked_subsystems": A.dice(A.id_list(answer, "blocked_subsystems"), truth.blocked_subsystems),
            "evidence_named": A.dice(named, evidence),
        }
        s_answer = A.weighted(comps, ANSWER_WEIGHTS) if correct else 0.0
        if evidence:
            coverage: float | None = len(path.fetched & evidence) / len(evidence)
            cov_component, required = coverage, bool(path.fetched & evidence)
        else:
            coverage, cov_component, required = None, float(path.looked), path.looked
        grounding = sum(1 for n in named if n in path.fetched) / len(named) if named else 1.0
        traj = {"evidence_coverage": cov_component, "citation_grounding": grounding, "gate_discipline": 1.0 - v}
        return TrackScore(
            comps, s_answer, correct, traj, A.weighted(traj, TRAJ_WEIGHTS), required and grounding == 1.0, coverage
        )

    def dry_run_findings(self, ctx: Any, stats: dict[str, Any]) -> Iterable[Any]:
        """GE404: a requested bucket that generation left empty."""
        from ...verifier.rules.registry import finding

        if not stats["tracks"].get(self.name):
            return
        cfg = ctx.manifest.evaluation.perspective
        for bucket in self.buckets:
            if getattr(cfg, bucket) > 0 and not stats["buckets"][self.name].get(bucket):
                line, path = ctx.locate(("evaluation", self.name, bucket))
                yield finding(
                    "GE404",
                    f"no {bucket} Perspective question (share {getattr(cfg, bucket):g})",
                    file=ctx.manifest_file,
                    line=line,
                    path=path,
                )


TRACK = Perspective()
