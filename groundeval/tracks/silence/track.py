"""Silence — "was a postmortem written for INC-42?"

Truth comes from the silence pair specs: a trigger with its response within the gap
(presence) or without one (absence), and the expected search space an honest "no" must
have checked; candidates are built by ``candidates.py``. Buckets: absence,
presence (half each).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...questions.answers import RATIONALE, STR_LIST
from ...scoring import answers as A
from ..base import BaseTrack, GenerationContext, TrackScore
from .model import NAME, SilenceAnswer, SilenceTruth

if TYPE_CHECKING:
    from ...contract.models import EvaluationConfig, ScoringConfig
    from ...scoring.score import PathFacts

__all__ = ["TRACK", "TRAJ_WEIGHTS", "Silence"]

TRAJ_WEIGHTS = {"coverage": 0.7, "subsystem_search": 0.3}


class Silence(BaseTrack):
    name = NAME
    truth_model = SilenceTruth
    answer_model = SilenceAnswer
    buckets = ("absence", "presence")
    yes_buckets = ("presence",)
    label_field = "exists"
    templates = (
        ("silence.1", "Within {gap} after {trigger}, was there {response} for it?"),
        ("silence.2", "Did {response} follow {trigger} within {gap}?"),
        ("silence.3", "Is there any record of {response} for {trigger} within {gap} of it?"),
    )
    default_gates = ()
    default_weights = (0.30, 0.70)
    # per label: the graph statistic that yields it, and why there is none when it is 0 (GE411)
    label_sources = {
        False: ("absences", "no verified absence exists: every trigger has its joined response (or is ambiguous)"),
        True: ("presences", "no presence exists: no trigger has a joined response within max_gap_days"),
    }

    def cap(self, ev: EvaluationConfig) -> int:
        return ev.max_silence_questions

    def bucket_ratios(self, ev: EvaluationConfig) -> dict[str, float]:
        return {"absence": 0.5, "presence": 0.5}

    def configured(self, ev: EvaluationConfig) -> bool:
        return ev.max_silence_questions > 0 and bool(ev.silence_pairs)

    def answer_schema(self, mechanisms: Sequence[str] = ()) -> dict[str, Any]:
        props = {"exists": {"type": "boolean"}, "evidence_artifacts": STR_LIST}
        return {
            "type": "object",
            "properties": {**props, "rationale": RATIONALE},
            "required": ["exists"],
            "additionalProperties": False,
        }

    def truth_ids(self, truth: SilenceTruth) -> list[str]:
        return [
            truth.trigger_event_id,
            truth.response_event_id or "",
            *truth.expected_search_space,
            *truth.evidence_artifacts,
        ]

    def pool(self, ctx: GenerationContext) -> Any:
        from .candidates import pool

        return pool(ctx.graph, ctx.ev, ctx.seed)

    def pool_events(self, pool: Any) -> set[str]:
        return {x for r in pool for x in (r.trigger_event_id, r.response_event_id) if x}

    def prepare(self, ctx: GenerationContext, pool: Any) -> Any:
        """The sampled records with their expected search spaces (BM25 for ranked selectors)
        and the absences something could answer "yes" (set aside in ``candidates``)."""
        from ...graph.build import doubtful_absences, with_search_spaces
        from .candidates import prepared

        records = with_search_spaces(ctx.store, pool, ctx.graph.events, ctx.sql)
        return prepared(records, doubtful_absences(ctx.store, records, ctx.graph.events, ctx.sql))

    def pool_artifacts(self, ctx: GenerationContext, pool: Any) -> set[str]:
        from ...questions.subjects import all_values

        events = ctx.graph.events
        out = {a for e in self.pool_events(pool) for a in events[e].artifacts}
        out |= {a for r in pool for a in r.expected_search_space}
        out |= {v for r in pool for v in all_values(events[r.trigger_event_id].record)}
        return out

    def subject_requests(self, ctx: GenerationContext, pool: Any) -> list[tuple[Any, Any, Any]]:
        from .candidates import subject_requests

        return subject_requests(ctx.graph, ctx.ev, ctx.artifacts, pool)

    def candidates(self, ctx: GenerationContext, pool: Any) -> tuple[list[Any], dict[str, int]]:
        from .candidates import candidates

        return candidates(ctx.graph, ctx.ev, ctx.subjects, ctx.artifacts, pool, ctx.requests.get(self.name))

    def score(
        self,
        question: Any,
        truth: SilenceTruth,
        answer: dict[str, Any] | None,
        path: PathFacts,
        v: float,
        config: ScoringConfig,
    ) -> TrackScore:
        exists = A.boolean(answer, "exists")
        correct = exists is not None and exists == truth.exists
        comps = {"exists": float(correct)}
        space = set(truth.expected_search_space)
        if truth.exists and truth.evidence_artifacts:
            coverage: float | None = float(bool(path.fetched & set(truth.evidence_artifacts)))
        elif space:
            coverage = len(path.fetched & space) / len(space)
        else:
            coverage = None
        cov_component = coverage if coverage is not None else float(path.looked)
        if truth.expected_subsystems:
            subs = len(path.searched_subsystems & set(truth.expected_subsystems)) / len(set(truth.expected_subsystems))
        else:
            subs = float(path.looked)
        if path.context:  # no searches in context mode: the window was searched for the agent
            traj = {"coverage": cov_component}
            s_traj = cov_component
        else:
            traj = {"coverage": cov_component, "subsystem_search": subs}
            s_traj = A.weighted(traj, TRAJ_WEIGHTS)
        return TrackScore(comps, comps["exists"], correct, traj, s_traj, cov_component == 1.0, coverage)

    def dry_run_findings(self, ctx: Any, stats: dict[str, Any]) -> Iterable[Any]:
        """GE410: absences set aside because something could be their response (counted per reason)."""
        from ...graph.build import DOUBT_REASONS
        from ...verifier.rules.registry import finding

        skipped = stats.get("skipped", {}).get(self.name, {})
        found = {r: skipped[r] for r in DOUBT_REASONS if skipped.get(r)}
        if found:
            parts = ", ".join(f"{r} {n}" for r, n in found.items())
            yield finding(
                "GE410",
                f"silence: {sum(found.values())} sampled trigger(s) without a joined response set aside as "
                f"ambiguous ({parts}): an event of the response type in the window or the expected search "
                "space could be the response",
                file=ctx.manifest_file,
            )

    def absence_space(self, truth: SilenceTruth) -> list[str]:
        return list(truth.expected_search_space)

    def balance_fix(self, questions: Sequence[Any], ev: EvaluationConfig) -> str | None:
        buckets = {q.bucket for q in questions}
        if "absence" not in buckets:
            return (
                "No Silence absence question: every trigger has its response within max_gap_days. Add triggers "
                "whose response never happened, or lower the caps of the other label."
            )
        if "presence" not in buckets:
            return (
                "No Silence presence question: no trigger has its response. Add responses (with the join "
                "values of their trigger) to the event log."
            )
        return None


TRACK = Silence()
