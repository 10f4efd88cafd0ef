"""Counterfactual — "if the escalation had not happened, would the postmortem have turned
out differently?"

Truth comes from the causal link specs (joins on shared identifiers within a maximum
gap; distractors are adjacent pairs whose join fails); candidates are built by
``candidates.py``. Buckets: positive, negative
(``evaluation.counterfactual_negative_ratio``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ...questions.answers import RATIONALE, STR_LIST
from ...scoring import answers as A
from ..base import BaseTrack, GenerationContext, TrackScore
from .model import DIRECTIONS, NAME, NO_MECHANISM, CounterfactualAnswer, CounterfactualTruth

if TYPE_CHECKING:
    from ...contract.models import EvaluationConfig, ScoringConfig
    from ...scoring.score import PathFacts

__all__ = ["ANSWER_COMPONENTS", "TRACK", "TRAJ_WEIGHTS", "Counterfactual", "mechanism_vocabulary"]

ANSWER_COMPONENTS = ("outcome", "mechanism", "cause_event", "effect_event", "direction", "actors")
TRAJ_WEIGHTS = {"cause_evidence": 0.3, "effect_evidence": 0.3, "mechanism_vocabulary": 0.2, "horizon_discipline": 0.2}


@lru_cache(maxsize=1024)
def _vocabulary(name: str, aliases: tuple[str, ...], listed: tuple[str, ...]) -> frozenset[str]:
    """The normalised mechanism vocabulary (cached: a pack has only a few)."""
    vocab = {A.norm_label(x) for x in (name, "none", *aliases, *listed)}
    vocab.discard("")
    return frozenset(vocab)


# id(question) -> (question, truth, its vocabulary): the question held, so its id stays its own
_VOCABULARIES: dict[int, tuple[Any, Any, frozenset[str]]] = {}


def mechanism_vocabulary(question: Any, truth: CounterfactualTruth) -> frozenset[str]:
    """The mechanism names the question's answer schema lists and its truth's, normalised;
    found once per question object (scoring asks for every trace; questions are not changed)."""
    hit = _VOCABULARIES.get(id(question))
    if hit is not None and hit[0] is question and hit[1] is truth:
        return hit[2]
    prop = (question.answer_schema.get("properties") or {}).get("causal_mechanism") or {}
    listed = tuple(x for key in ("enum", "examples") for x in prop.get(key) or [] if isinstance(x, str))
    vocab = _vocabulary(truth.causal_mechanism, tuple(truth.mechanism_aliases), listed)
    if len(_VOCABULARIES) >= 4096:
        _VOCABULARIES.clear()
    _VOCABULARIES[id(question)] = (question, truth, vocab)
    return vocab


def _evidence(fetched: set[str], own: Sequence[str], other: Sequence[str]) -> float:
    """1 when a fetched artifact is one of this side's (cause or effect) own: an artifact both
    events reference (the ticket a postmortem and its incident share) tells nothing of either
    side, so it counts only when the side has no other. 1 when the side has no artifact."""
    if not own:
        return 1.0
    distinct = set(own) - set(other)
    return float(bool(fetched & (distinct or set(own))))


class Counterfactual(BaseTrack):
    name = NAME
    truth_model = CounterfactualTruth
    answer_model = CounterfactualAnswer
    buckets = ("positive", "negative")
    yes_buckets = ("positive",)
    label_field = "outcome_changed"
    templates = (
        ("counterfactual.1", "Suppose {premise}. Would {effect} have turned out differently?{hint}"),
        ("counterfactual.2", "Counterfactually: if {premise}, would that have changed {effect}?{hint}"),
        ("counterfactual.3", "Consider a world in which {premise}. Would {effect} have been different?{hint}"),
    )
    default_gates = ("horizon",)
    default_weights = (0.50, 0.50)
    # per label: the graph statistic that yields it, and why there is none when it is 0 (GE411)
    label_sources = {
        False: (
            "distractors",
            "no distractor pair exists: no cause is followed within max_gap_days by an effect-type event that "
            "resolves the join paths but does not share the key",
        ),
        True: ("causal_edges", "no causal edge exists: no cause has a joined effect within max_gap_days"),
    }
    distinct_references = True  # the effect must not restate the premise

    def cap(self, ev: EvaluationConfig) -> int:
        return ev.max_counterfactual_questions

    def bucket_ratios(self, ev: EvaluationConfig) -> dict[str, float]:
        return {"positive": 1 - ev.counterfactual_negative_ratio, "negative": ev.counterfactual_negative_ratio}

    def configured(self, ev: EvaluationConfig) -> bool:
        return ev.max_counterfactual_questions > 0 and bool(ev.causal_links)

    def requested_yes(self, ev: EvaluationConfig) -> float:
        return 1 - ev.counterfactual_negative_ratio

    def answer_schema(self, mechanisms: Sequence[str] = ()) -> dict[str, Any]:
        vocab = sorted(set(mechanisms or [])) + [NO_MECHANISM]
        props = {
            "outcome_changed": {"type": "boolean"},
            "causal_mechanism": {"type": "string", "enum": vocab},
            "cause_event_id": {"type": "string"},
            "effect_event_id": {"type": "string"},
            "mechanism_direction": {"type": "string", "enum": list(DIRECTIONS)},
            "actors": STR_LIST,
            "evidence_artifacts": STR_LIST,
        }
        required = ["outcome_changed", "causal_mechanism", "cause_event_id", "effect_event_id", "mechanism_direction"]
        return {
            "type": "object",
            "properties": {**props, "rationale": RATIONALE},
            "required": required,
            "additionalProperties": False,
        }

    def vocabulary(self, ev: EvaluationConfig) -> list[str]:
        """Mechanism names and aliases: the answer's words."""
        return [v for s in ev.causal_links for v in [s.name, *s.mechanism_aliases]]

    def truth_ids(self, truth: CounterfactualTruth) -> list[str]:
        return [truth.cause_event_id, truth.effect_event_id, *truth.evidence_artifacts]

    def text_ok(self, slots: Mapping[str, str]) -> bool:
        from ...questions.leakage import circular

        return not circular(slots["premise"], slots["effect"])

    def pool(self, ctx: GenerationContext) -> Any:
        from .candidates import pool

        return pool(ctx.graph, ctx.ev, ctx.seed)

    def pool_events(self, pool: Any) -> set[str]:
        return {x for r, _ in pool for x in (r.cause_event_id, r.effect_event_id)}

    def pool_artifacts(self, ctx: GenerationContext, pool: Any) -> set[str]:
        return {a for e in self.pool_events(pool) for a in ctx.graph.events[e].artifacts}

    def subject_requests(self, ctx: GenerationContext, pool: Any) -> list[tuple[Any, Any, Any]]:
        from .candidates import subject_requests

        return subject_requests(ctx.graph, ctx.ev, ctx.artifacts, pool)

    def candidates(self, ctx: GenerationContext, pool: Any) -> tuple[list[Any], dict[str, int]]:
        from .candidates import candidates

        return candidates(
            ctx.graph, ctx.ev, ctx.subjects, ctx.artifacts, ctx.seed, pool, ctx.vocabulary, ctx.requests.get(self.name)
        )

    def score(
        self,
        question: Any,
        truth: CounterfactualTruth,
        answer: dict[str, Any] | None,
        path: PathFacts,
        v: float,
        config: ScoringConfig,
    ) -> TrackScore:
        """The answer is correct when the composite of its parts reaches
        ``scoring.counterfactual_threshold``."""
        mech = A.norm_label(A.text(answer, "causal_mechanism"))
        if truth.mechanism_direction == "no_causal_link" or truth.causal_mechanism == NO_MECHANISM:
            accepted = set(A.NONE_MECHANISMS)
        else:
            accepted = {A.norm_label(truth.causal_mechanism)} | {A.norm_label(a) for a in truth.mechanism_aliases}
        outcome = A.boolean(answer, "outcome_changed")
        comps = {
            "outcome": float(outcome is not None and outcome == truth.outcome_changed),
            "mechanism": float(bool(mech) and mech in accepted),
            "cause_event": float(A.text(answer, "cause_event_id") == truth.cause_event_id),
            "effect_event": float(A.text(answer, "effect_event_id") == truth.effect_event_id),
            "direction": float(
                A.norm_label(A.text(answer, "mechanism_direction")) == A.norm_label(truth.mechanism_direction)
            ),
            "actors": A.dice(A.id_list(answer, "actors"), truth.actors) if answer else 0.0,
        }
        s_answer = sum(comps.values()) / len(comps) if answer else 0.0
        correct = answer is not None and round(s_answer, A.DIGITS) >= config.counterfactual_threshold
        cause_ev = _evidence(path.fetched, truth.cause_artifacts, truth.effect_artifacts)
        effect_ev = _evidence(path.fetched, truth.effect_artifacts, truth.cause_artifacts)
        traj = {
            "cause_evidence": cause_ev,
            "effect_evidence": effect_ev,
            "mechanism_vocabulary": float(bool(mech) and mech in mechanism_vocabulary(question, truth)),
            "horizon_discipline": 0.0 if path.flag_counts.get("horizon") else 1.0,
        }
        needed = set(truth.evidence_artifacts) or set(truth.cause_artifacts) | set(truth.effect_artifacts)
        coverage = len(path.fetched & needed) / len(needed) if needed else None
        required = cause_ev == 1.0 and effect_ev == 1.0
        return TrackScore(comps, s_answer, correct, traj, A.weighted(traj, TRAJ_WEIGHTS), required, coverage)

    def balance_fix(self, questions: Sequence[Any], ev: EvaluationConfig) -> str | None:
        with_negative = {q.meta.get("spec") for q in questions if q.bucket == "negative"}
        lacking = [s.name for s in ev.causal_links if s.name not in with_negative]
        if lacking:
            return (
                f"Counterfactual spec(s) {', '.join(lacking)} yielded no no_causal_link question. A negative is "
                "a cause and an effect event of the spec's types within max_gap_days that fail the join: add "
                "such pairs to the event log, or lower evaluation.counterfactual_negative_ratio to the split "
                "you accept."
            )
        return None


TRACK = Counterfactual()
