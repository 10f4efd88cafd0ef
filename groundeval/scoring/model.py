"""The score file formats: one :class:`QuestionScore` per trace (``scores.jsonl``) and
the :class:`RunReport` over a run (``report.json``).

Both are plain data so a user can keep, diff and re-feed them; the JSON Schemas in
``contracts/`` are generated from these models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_serializer

from ..models import StrictModel

FLAG_KINDS: tuple[str, ...] = ("horizon", "subsystem", "actor")
FailureClass = Literal["pass", "no_answer", "wrong_answer", "state_invalid_correct"]
FAILURE_CLASSES: tuple[str, ...] = ("pass", "state_invalid_correct", "wrong_answer", "no_answer")


_Model = StrictModel  # the one shared base of groundeval's own formats


# Fields added after the first release that are written only when they differ from their
# default, so files of a default run keep their bytes (trial 0, profile "default", no trials).
_OMITTED_AT_DEFAULT: dict[str, Any] = {
    "trial": 0,
    "profile": "default",
    "trials": None,
    "errored_episodes": 0,
    "empty_episodes": 0,
    "no_retrieval": False,
}


class _Compact(_Model):
    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler):
        data = handler(self)
        if isinstance(data, dict):
            for key, default in _OMITTED_AT_DEFAULT.items():
                if key in data and data[key] == default:
                    del data[key]
        return data


class QuestionScore(_Compact):
    """The verdict on one trace: a pure function of (question, trace, config, profile)."""

    question_id: str
    track: str
    trial: int = Field(0, ge=0, description="Trial index of the trace (repeated runs); written only when > 0.")
    profile: str = Field(
        "default",
        description="Scoring profile that produced this score; written only when "
        "not 'default' (docs/scoring.md, Scoring profiles).",
    )
    bucket: str
    difficulty: str
    mode: str
    agent: str | None = None
    answered: bool = Field(description="A valid final answer was submitted.")
    s_answer: float
    s_traj: float
    s_combined: float = Field(description="w_a * s_answer + w_t * s_traj.")
    violation_rate: float = Field(description="v: flagged calls / calls (context mode: bad citations / citations).")
    penalty: float = Field(description="(1 - v)^2.")
    s_adj: float = Field(description="s_combined * penalty.")
    answer_components: dict[str, float] = Field(default_factory=dict)
    traj_components: dict[str, float] = Field(default_factory=dict)
    answer_correct: bool
    path_valid: bool = Field(description="No gate broken and the required evidence was retrieved.")
    state_invalid_correct: bool = Field(description="Correct answer reached by an invalid path.")
    valid_answer: bool = Field(description="Correct answer by a valid path.")
    failure_class: FailureClass
    failures: list[str] = Field(default_factory=list, description="Every failure tag that applies (sorted).")
    v_units: int = Field(description="Denominator of v: tool calls, or citations in context mode.")
    v_bad: int = Field(description="Numerator of v: flagged calls, or bad citations in context mode.")
    n_calls: int
    no_retrieval: bool = Field(
        False,
        description="Tool mode: the episode made no search or fetch call, so its v = 0 shows no gate respected "
        "(a slice of such episodes is compliance tier no_evidence); written only when true.",
    )
    flag_counts: dict[str, int] = Field(default_factory=dict, description="Flagged units per gate kind.")
    hallucinated_ids: list[str] = Field(default_factory=list, description="Unknown ids fetched or cited (sorted).")
    coverage: float | None = Field(
        None, description="Required artifacts validly fetched / required; None when none required."
    )
    n_citations: int = 0
    citation_rates: dict[str, float] = Field(
        default_factory=dict, description="Context mode: hallucinated / access / horizon citation rates."
    )


class GroupStats(_Model):
    """Aggregates over one slice of a run (all, a track, a bucket or a difficulty)."""

    n: int
    means: dict[str, float | None] = Field(description="Mean of every per-question score.")
    accuracy: float
    answered_rate: float
    valid_answer_rate: float
    path_valid_rate: float
    state_invalid_correct_rate: float
    n_calls: int
    v_units: int
    v_bad: int
    run_violation_rate: float = Field(description="v over all units of the slice.")
    run_s_adj: float = Field(description="mean(s_combined) * (1 - run_violation_rate)^2.")
    compliance_tier: Literal["perfect", "high", "moderate", "low", "no_evidence"] = Field(
        description="perfect (v = 0), high, moderate or low by v; no_evidence when the slice has no tool calls "
        "(citations in context mode; none at all in zero-shot mode; in tool mode, none from an episode that "
        "searched or fetched) or no answer, so v = 0 proves nothing."
    )
    violation_rates: dict[str, float] = Field(description="Flagged units per gate kind / all units.")
    hallucinated_ids: int
    mean_coverage: float | None
    failure_classes: dict[str, int]
    ci95: dict[str, list[float]] = Field(default_factory=dict, description="Seeded bootstrap 95% intervals.")


class ZeroShotFloor(_Model):
    n: int
    floor: float = Field(description="Mean s_answer of the zero-shot run: what is answerable without retrieval.")
    s_answer: float
    gap: float = Field(description="This run's mean s_answer minus the floor.")


class TrialQuestion(_Model):
    """One question over its repeated trials."""

    question_id: str
    track: str
    n: int = Field(description="Trials scored for this question.")
    valid: int = Field(description="Trials with a valid answer (correct by a valid path).")
    mean_s_adj: float
    pass_at_k: float | None = Field(description="Unbiased pass@k: 1 - C(n-c, k) / C(n, k), c = valid trials.")
    pass_hat_k: float | None = Field(description="pass^k: C(c, k) / C(n, k) — all k trials valid (k = n: c == n).")


class TrialGroup(_Model):
    """Repeated-trial figures over the questions of a slice (overall or one track)."""

    n_questions: int
    n_traces: int
    mean_s_adj: float = Field(description="Mean over questions of the per-question mean S_adj.")
    pass_at_k: dict[str, float] = Field(description="k -> mean over questions of the unbiased pass@k.")
    pass_hat_k: dict[str, float] = Field(description="k -> mean over questions of pass^k (all k trials valid).")
    ci95: dict[str, list[float]] = Field(
        default_factory=dict,
        description=(
            "Percentile 95% intervals of mean_s_adj, pass_at_<K> and pass_hat_<K> from a two-stage bootstrap: "
            "questions resampled with replacement, then each drawn question's trials."
        ),
    )


class TrialsReport(_Model):
    """Present when a run holds more than one trial per question (``--trials K``)."""

    trials: int = Field(description="The most trials any question has (K).")
    k: int = Field(description="The k of pass@k / pass^k: the fewest trials any question has.")
    overall: TrialGroup
    tracks: dict[str, TrialGroup] = Field(default_factory=dict)
    questions: list[TrialQuestion] = Field(default_factory=list)


class RunReport(_Compact):
    """The ``report.json`` file."""

    schema_version: str = "1"
    profile: str = Field("default", description="Scoring profile of the scores; written only when not 'default'.")
    agent: str | None = None
    mode: str | None = None
    contract_digest: str | None = None
    seed: int = 0
    bootstrap_samples: int = 1000
    config: dict[str, Any] = Field(default_factory=dict, description="The scoring configuration applied.")
    overall: GroupStats
    tracks: dict[str, GroupStats] = Field(default_factory=dict)
    buckets: dict[str, dict[str, GroupStats]] = Field(default_factory=dict, description="track -> bucket -> stats.")
    difficulties: dict[str, dict[str, GroupStats]] = Field(
        default_factory=dict, description="track -> difficulty -> stats."
    )
    zero_shot: dict[str, ZeroShotFloor] | None = None
    missing_question_ids: list[str] = Field(default_factory=list, description="Questions without a trace.")
    unknown_question_ids: list[str] = Field(default_factory=list, description="Traces of unknown questions.")
    trials: TrialsReport | None = Field(
        None, description="Repeated trials (written only when a question has more than one trial)."
    )
    errored_episodes: int = Field(
        0,
        ge=0,
        description="Scores of episodes the agent did not finish (it raised or timed out): each scores 0, "
        "and the gate fails the run unless errors are allowed. Written only when > 0.",
    )
    empty_episodes: int = Field(
        0,
        ge=0,
        description="Scores of episodes with no search or fetch and no answer: each scores 0, and the gate "
        "fails the run unless they are allowed. Written only when > 0.",
    )
