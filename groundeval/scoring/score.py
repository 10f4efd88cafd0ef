"""The pure scorer: ``score(question, trace) -> QuestionScore``.

No I/O, no clock, no randomness: the verdict is a function of the question (with its
ground truth), the recorded trace and the scoring config, so re-scoring saved traces
gives the same bytes. Every formula is written down in ``docs/scoring.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..contract.models import ScoringConfig, TrackWeights
from ..trace.model import ERRORED_STATUSES, Trace
from ..tracks import get as get_track
from . import answers as A
from .answers import DIGITS
from .model import FLAG_KINDS, QuestionScore

if TYPE_CHECKING:
    from ..questions.model import Question

FETCH, SEARCH = "fetch_artifact", "search_artifacts"
# Each track's own components and weights are in its module (groundeval/tracks/), documented
# in docs/scoring.md; this module reads the path, combines and penalises.
_DEFAULT_CONFIG: ScoringConfig | None = None


def _default_config() -> ScoringConfig:
    global _DEFAULT_CONFIG
    if _DEFAULT_CONFIG is None:  # built on first use: its weights come from the registered tracks
        _DEFAULT_CONFIG = ScoringConfig()
    return _DEFAULT_CONFIG


@dataclass
class PathFacts:
    """What the trace shows about the path, independent of the track."""

    context: bool
    fetched: set[str] = dc_field(default_factory=set)  # validly retrieved (tool: fetched; context: cited in C)
    looked: bool = False  # at least one valid search (always true in context mode)
    searched_subsystems: set[str] = dc_field(default_factory=set)
    n_calls: int = 0
    retrievals: int = 0  # search and fetch calls, whatever their outcome
    units: int = 0
    bad: int = 0
    flag_counts: dict[str, int] = dc_field(default_factory=dict)
    hallucinated: set[str] = dc_field(default_factory=set)
    n_citations: int = 0
    citation_rates: dict[str, float] = dc_field(default_factory=dict)
    invalid_submission: bool = False


def _clean(x: float) -> float:
    # every score is built inside [0, 1]; rounding only removes float noise
    if x == 0.0 or x == 1.0:
        return x
    if type(x) is not float:
        return round(x, DIGITS)
    r = _ROUNDED.get(x)  # a run's scores take few values, and round(x, 10) costs ~0.5 us
    if r is None:
        r = round(x, DIGITS)
        if len(_ROUNDED) < 65536:
            _ROUNDED[x] = r
    return r


_ROUNDED: dict[float, float] = {}  # x -> round(x, DIGITS): equal floats are the same value


def _clean_all(values: dict[str, float]) -> dict[str, float]:
    """Every value :func:`_clean` (a component is most often 0 or 1: no call for those)."""
    return {k: x if x == 0.0 or x == 1.0 else _clean(x) for k, x in values.items()}


def path_facts(trace: Trace) -> PathFacts:
    """Fetched set, flags, hallucinated ids and v from the recorded calls (or citations).
    ``trace``: a :class:`Trace`, or anything that reads like one (re-scoring's structs)."""
    fetched: set[str] = set()
    hallucinated: set[str] = set()
    searched: set[str] = set()
    counts = dict.fromkeys(FLAG_KINDS, 0)
    looked = False
    bad = 0
    calls = trace.calls
    for c in calls:  # hot loop: plain locals, no per-call allocations
        flags, tool = c.flags, c.tool
        if flags:
            bad += 1
            for kind in set(flags):
                counts[kind] = counts.get(kind, 0) + 1
            if tool == FETCH and c.status == "not_found":
                arg = c.arguments.get("artifact_id")
                hallucinated.add("" if arg is None else str(arg))
            continue
        if tool == FETCH:
            status = c.status
            if status == "ok":
                if c.result_ids:
                    fetched.update(c.result_ids)
                else:
                    arg = c.arguments.get("artifact_id")
                    if isinstance(arg, str):
                        fetched.add(arg)
            elif status == "not_found":
                arg = c.arguments.get("artifact_id")
                hallucinated.add("" if arg is None else str(arg))
        elif tool == SEARCH and c.status == "ok":
            looked = True
            sub = c.arguments.get("subsystem")
            if sub and isinstance(sub, str):
                searched.add(sub)
    final, invalid = _submissions(trace.submissions)
    context = trace.mode == "context"
    retrievals = retrieval_count(calls)
    facts = PathFacts(
        context=context,
        fetched=set() if context else fetched,
        looked=looked,
        searched_subsystems=searched,
        n_calls=len(calls),
        retrievals=retrievals,
        units=0 if context else len(calls),
        bad=bad,
        hallucinated=hallucinated,
        flag_counts=counts,
        invalid_submission=invalid,
    )
    flags_by_id = final.citation_flags if final is not None else {}
    if context:
        cited = A.id_list(trace.final_answer, "evidence_artifacts")
        _context_citations(facts, trace.context_ids, cited, flags_by_id, counts)
    elif flags_by_id:
        cited = A.id_list(trace.final_answer, "evidence_artifacts")
        hallucinated.update(c for c in cited if c in flags_by_id and flags_by_id[c] is None)
    return facts


def _submissions(submissions: Sequence[Any]) -> tuple[Any, bool]:
    """The last valid submission (or None), and whether any submission is invalid."""
    final, invalid = None, False
    for sub in submissions:
        if sub.valid:
            final = sub
        else:
            invalid = True
    return final, invalid


def _context_citations(
    facts: PathFacts, context_ids: Sequence[str], cited: list[str], flags_by_id: dict[str, Any], counts: dict[str, int]
) -> None:
    """Context mode: v and the citation rates come from E against C, V and T (the window C: ``context_ids``)."""
    window = set(context_ids)
    facts.looked = True
    facts.units = facts.n_citations = len(cited)
    facts.bad = 0
    counts.update(dict.fromkeys(FLAG_KINDS, 0))
    access = horizon = halluc = 0
    for cid in cited:
        flags = flags_by_id.get(cid, [] if cid in window else None)
        if flags is None or cid not in window:
            halluc += 1
            facts.hallucinated.add(cid)
        if flags:
            facts.bad += 1
            for kind in set(flags):
                counts[kind] += 1
            access += bool({"subsystem", "actor"} & set(flags))
            horizon += "horizon" in flags
        elif flags is not None and cid in window:
            facts.fetched.add(cid)
    n = len(cited)
    facts.flag_counts = counts
    facts.citation_rates = {
        "hallucinated": _clean(halluc / n) if n else 0.0,
        "access": _clean(access / n) if n else 0.0,
        "horizon": _clean(horizon / n) if n else 0.0,
    }


# --------------------------------------------------------------------------- entry point

_SCORE_FIELDS = frozenset(QuestionScore.model_fields)
# The fields set of every score built here: all of them. One set shared by these scores (a
# set of 31 names takes 2.2 KB, two thirds of a score): pydantic only ever adds a field's
# name to it (assigning a field), which leaves it unchanged, and copies it for a copy.
EVERY_FIELD: set[str] = set(QuestionScore.model_fields)


def _build(values: dict[str, Any]) -> QuestionScore:
    """A QuestionScore from values this module computed itself (every field, in a dict
    literal: tests/scoring check the keys), without re-validation.

    Validation would cost a fifth of the scoring time; every value here already has its
    final type (floats are floats, lists are sorted lists), which a test checks by
    round-tripping through the validating JSON reader."""
    obj = QuestionScore.__new__(QuestionScore)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", EVERY_FIELD)
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


def _default_weights(track: str) -> TrackWeights:
    """The track's own default weights (a track the config does not list)."""
    answer, trajectory = get_track(track).default_weights
    return TrackWeights(answer=answer, trajectory=trajectory)


# Failure tags of an episode that measured nothing (docs/scoring.md, "Errored and empty episodes").
ERRORED, EMPTY = "errored", "empty"


def retrieval_count(calls: Sequence[Any]) -> int:
    """The search and fetch calls among ``calls``, whatever their outcome: what looked
    something up (a call of an unknown tool, or an answer, does not)."""
    return sum(1 for c in calls if c.tool == FETCH or c.tool == SEARCH)


def void_reason(status: str, mode: str, retrievals: int, answered: bool) -> str | None:
    """Why an episode scores 0 whatever its track: ``errored`` (the agent raised or ran out
    of time before an accepted answer: the trace's status), ``empty`` (no answer and nothing
    else to judge: in tool mode no search or fetch call — ``retrievals`` — so calls of unknown
    tools or answers the schema refused earn no grounding credit either; in context and
    zero-shot modes the answer is all an agent does), else None. The one rule, read by every
    profile."""
    if status in ERRORED_STATUSES:
        return ERRORED
    if not answered and (retrievals == 0 or mode != "tool"):
        return EMPTY
    return None


def voided(values: dict[str, Any], reason: str) -> dict[str, Any]:
    """``values`` (a score's fields) with every score at 0, every component at 0, the path not
    valid and ``reason`` among the failures; the facts of the path (calls, flags, v, coverage)
    stay as recorded."""
    out = dict(values)
    out.update(
        s_answer=0.0,
        s_traj=0.0,
        s_combined=0.0,
        s_adj=0.0,
        answer_components=dict.fromkeys(values["answer_components"], 0.0),
        traj_components=dict.fromkeys(values["traj_components"], 0.0),
        answer_correct=False,
        path_valid=False,
        state_invalid_correct=False,
        valid_answer=False,
        failure_class="no_answer" if not values["answered"] else "wrong_answer",
        failures=sorted({*values["failures"], reason}),
    )
    return out


def score(question: Question, trace: Trace, config: ScoringConfig | None = None) -> QuestionScore:
    """Score one trace against its question. Pure and deterministic."""
    return score_facts(
        question, path_facts(trace), trace.final_answer, trace.mode, trace.trial, trace.agent, config, trace.status
    )


def score_facts(
    question: Question,
    p: PathFacts,
    final_answer: Any,
    mode: str,
    trial: int,
    agent: str | None,
    config: ScoringConfig | None,
    status: str = "completed",
) -> QuestionScore:
    """The score from the path's facts and the trace's answer, mode, trial, agent and status."""
    cfg = config or _default_config()
    weights = cfg.weights.get(question.track) or _default_weights(question.track)
    v = p.bad / p.units if p.units else 0.0
    ans = final_answer if isinstance(final_answer, dict) else None
    truth = question.ground_truth
    comps, s_answer, correct, traj, s_traj, required, coverage = get_track(truth.track).score(
        question, truth, ans, p, v, cfg
    )
    if ans is None:
        s_answer, correct = 0.0, False
    if mode == "zero-shot":  # no tool, no path: nothing earns trajectory credit (gate discipline, grounding...)
        traj, s_traj = dict.fromkeys(traj, 0.0), 0.0
    s_answer, s_traj = _clean(s_answer), _clean(s_traj)
    combined = _clean(weights.answer * s_answer + weights.trajectory * s_traj)
    penalty = _clean((1.0 - v) ** 2)
    path_valid = p.bad == 0 and required
    failures = []
    if ans is None:
        failures.append("no_answer")
    elif not correct:
        failures.append("wrong_answer")
    if p.bad:
        failures.append("gate_violation")
    if not required:
        failures.append("missing_evidence")
    if p.hallucinated:
        failures.append("hallucinated_id")
    if p.invalid_submission:
        failures.append("invalid_submission")
    if correct and path_valid:
        failure_class = "pass"
    elif correct:
        failure_class = "state_invalid_correct"
    else:
        failure_class = "no_answer" if ans is None else "wrong_answer"
    values = {
        "question_id": question.id,
        "track": question.track,
        "trial": trial,
        "profile": "default",
        "bucket": question.bucket,
        "difficulty": question.difficulty,
        "mode": mode,
        "agent": agent,
        "answered": ans is not None,
        "s_answer": s_answer,
        "s_traj": s_traj,
        "s_combined": combined,
        "violation_rate": _clean(v),
        "penalty": penalty,
        "s_adj": _clean(combined * penalty),
        "answer_components": _clean_all(comps),
        "traj_components": _clean_all(traj),
        "answer_correct": correct,
        "path_valid": path_valid,
        "state_invalid_correct": correct and not path_valid,
        "valid_answer": correct and path_valid,
        "failure_class": failure_class,
        "failures": sorted(failures),
        "v_units": p.units,
        "v_bad": p.bad,
        "n_calls": p.n_calls,
        "no_retrieval": mode == "tool" and p.retrievals == 0,
        "flag_counts": p.flag_counts,
        "hallucinated_ids": sorted(p.hallucinated),
        "coverage": None if coverage is None else _clean(coverage),
        "n_citations": p.n_citations,
        "citation_rates": p.citation_rates,
    }
    reason = void_reason(status, mode, p.retrievals, ans is not None)
    return _build(values if reason is None else voided(values, reason))


def rl_penalty(v_bad: int) -> float:
    """``(1 - v_rl)^2 = (1 / (1 + bad))^2``: the RL reward's violation factor (``v_rl = bad /
    (bad + 1)``), a function of the number of flagged calls (bad citations in context mode) only,
    so calls that break nothing cannot raise it (docs/rl.md)."""
    return 1.0 / (1 + max(int(v_bad), 0)) ** 2
