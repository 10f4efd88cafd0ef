"""Process diagnostics: atomic, judge-free criteria on how an episode was run.

Each criterion is a pure function of the question (its ground truth), the recorded trace
and the scorer's verdict, so the same trace always gets the same diagnostics. They are
reported beside the score and never change it; only the shaped reward
(:func:`groundeval.rl.reward.reward` with ``shaped=True``) reads :attr:`Diagnostics.process_score`.

The criteria (``docs/rl.md``, "Process diagnostics"):

* ``redundant_calls`` — a search or fetch repeating an earlier one with the same arguments
  (a fetch of an id already read counts too);
* ``calls_after_evidence`` — searches and fetches made after the last call that added
  required evidence (or, when the question requires none, after the first search);
* ``negative_claim`` / ``negative_claim_searched`` — an answer that says "no" must follow
  at least one successful search (or the reading of every evidence artifact the question's
  truth holds for it);
* ``fetched`` / ``cited`` — evidence read vs evidence named; ``cited_not_fetched`` are
  citations the path does not support;
* ``outcome_consistent`` — the answer agrees with what was read: every citation was
  validly fetched, a "yes" cites at least one of them, a "no" was preceded by a look;
* ``process_consistent`` — the path agrees with the contract: no gate broken, the
  required evidence reached (the scorer's ``path_valid``), no unknown id, no call after
  the accepted answer;
* ``verdict`` — ``consistent`` (both hold), ``inconsistent`` (neither), ``outcome_only``
  or ``process_only``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..scoring import answers as A
from ..tracks import get as get_track

if TYPE_CHECKING:
    from ..questions.model import Question
    from ..scoring.model import QuestionScore
    from ..trace.model import Trace

__all__ = ["Diagnostics", "RunDiagnostics", "VERDICTS", "diagnose", "required_evidence", "summarize"]

FETCH, SEARCH, SUBMIT = "fetch_artifact", "search_artifacts", "submit_answer"
VERDICTS = ("consistent", "outcome_only", "process_only", "inconsistent")
DIGITS = 6


@dataclass(frozen=True)
class Diagnostics:
    """The process diagnostics of one episode (see the module docstring)."""

    question_id: str
    track: str
    trial: int
    n_calls: int
    redundant_calls: int
    calls_after_evidence: int
    post_submit_calls: int
    searches: int
    negative_claim: bool
    negative_claim_searched: bool
    fetched: list[str]
    cited: list[str]
    cited_not_fetched: list[str]
    fetched_not_cited: list[str]
    outcome_consistent: bool
    process_consistent: bool
    verdict: str
    process_score: float = field(metadata={"doc": "mean of the six atomic criteria, in [0, 1]"})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def required_evidence(question: Question) -> list[str]:
    """What the question requires the path to read: the truth's evidence artifacts, or for an
    absence the space an honest "no" must check (empty when neither applies)."""
    truth = question.ground_truth
    evidence = list(getattr(truth, "evidence_artifacts", None) or [])
    if evidence:
        return sorted(set(evidence))
    return sorted(set(get_track(question.track).absence_space(truth) or []))


def _key(call: Any) -> str:
    args = call.arguments
    if call.tool == FETCH:
        return f"{FETCH}\x00{args.get('artifact_id')!r}"
    return f"{call.tool}\x00" + json.dumps(args, sort_keys=True, default=str)


def _accepted_index(trace: Trace) -> int | None:
    for sub in trace.submissions:
        if sub.valid:
            return sub.call_index
    return None


def diagnose(question: Question, trace: Trace, score: QuestionScore) -> Diagnostics:
    """The diagnostics of one trace; ``score`` is the scorer's verdict on it (the same config)."""
    accepted = _accepted_index(trace)
    required = set(required_evidence(question))
    seen: set[str] = set()
    fetched: list[str] = []
    redundant = searches = post_submit = 0
    in_hand_at = -1  # index of the last call that added required evidence (or the first search)
    searches_before_answer = 0
    for call in trace.calls:
        if accepted is not None and call.index > accepted:
            post_submit += 1
            continue
        if call.tool not in (FETCH, SEARCH):
            continue
        key = _key(call)
        ok = call.status == "ok" and not call.flags
        if key in seen:
            redundant += 1
        seen.add(key)
        if call.tool == SEARCH:
            if ok:
                searches += 1
                if accepted is None or call.index < accepted:
                    searches_before_answer += 1
                if not required and in_hand_at < 0:
                    in_hand_at = call.index
        elif ok:
            new = [a for a in call.result_ids if a not in fetched]
            fetched.extend(new)
            if set(new) & required:
                in_hand_at = call.index
    have_all = required <= set(fetched) if required else in_hand_at >= 0
    after = 0
    if have_all:
        after = sum(
            1
            for c in trace.calls
            if c.tool in (FETCH, SEARCH) and c.index > in_hand_at and (accepted is None or c.index < accepted)
        )
    answer = trace.final_answer if isinstance(trace.final_answer, dict) else None
    label = A.boolean(answer, get_track(question.track).label_field) if answer is not None else None
    negative = label is False
    cited = sorted(set(A.id_list(answer, "evidence_artifacts"))) if answer is not None else []
    fetched_set = set(fetched)
    cited_not_fetched = [c for c in cited if c not in fetched_set]
    fetched_not_cited = sorted(fetched_set - set(cited))
    looked = searches_before_answer > 0 or bool(fetched) or trace.mode == "context"
    if trace.mode == "context":  # the window is what was read
        window = set(trace.context_ids)
        cited_not_fetched = [c for c in cited if c not in window]
        fetched_not_cited = []
    outcome = (
        answer is not None
        and not cited_not_fetched
        and ((label is True and bool(cited)) or (label is not True and looked))
    )
    process = score.path_valid and not score.hallucinated_ids and post_submit == 0
    verdict = (
        VERDICTS[0]
        if outcome and process
        else VERDICTS[3]
        if not (outcome or process)
        else ("outcome_only" if outcome else "process_only")
    )
    # a "no" stands on a search, or on having read every artifact the question's truth holds
    # for it (a "no causal link" is read off the two events' documents)
    neg_ok = (
        (not negative)
        or searches_before_answer > 0
        or trace.mode == "context"
        or (bool(required) and have_all and bool(getattr(question.ground_truth, "evidence_artifacts", None)))
    )
    n = len(trace.calls)
    parts = [
        1.0 - redundant / n if n else 1.0,
        1.0 - after / n if n else 1.0,
        float(neg_ok),
        (len(cited) - len(cited_not_fetched)) / len(cited) if cited else 1.0,
        float(outcome),
        float(process),
    ]
    return Diagnostics(
        question_id=question.id,
        track=question.track,
        trial=trace.trial,
        n_calls=n,
        redundant_calls=redundant,
        calls_after_evidence=after,
        post_submit_calls=post_submit,
        searches=searches,
        negative_claim=negative,
        negative_claim_searched=neg_ok,
        fetched=sorted(fetched_set),
        cited=cited,
        cited_not_fetched=cited_not_fetched,
        fetched_not_cited=fetched_not_cited,
        outcome_consistent=outcome,
        process_consistent=process,
        verdict=verdict,
        process_score=round(sum(parts) / len(parts), DIGITS),
    )


@dataclass(frozen=True)
class RunDiagnostics:
    """Diagnostics over a run: rates and means per track and overall, verdict counts."""

    n: int
    overall: dict[str, Any]
    tracks: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _group(items: list[Diagnostics]) -> dict[str, Any]:
    n = len(items)

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), DIGITS) if values else 0.0

    return {
        "n": n,
        "mean_process_score": mean([d.process_score for d in items]),
        "redundant_calls": sum(d.redundant_calls for d in items),
        "calls_after_evidence": sum(d.calls_after_evidence for d in items),
        "post_submit_calls": sum(d.post_submit_calls for d in items),
        "n_calls": sum(d.n_calls for d in items),
        "negative_claims": sum(d.negative_claim for d in items),
        "negative_claims_searched": sum(d.negative_claim and d.negative_claim_searched for d in items),
        "cited": sum(len(d.cited) for d in items),
        "cited_not_fetched": sum(len(d.cited_not_fetched) for d in items),
        "outcome_consistent_rate": mean([float(d.outcome_consistent) for d in items]),
        "process_consistent_rate": mean([float(d.process_consistent) for d in items]),
        "verdicts": {v: sum(d.verdict == v for d in items) for v in VERDICTS},
    }


def summarize(items: list[Diagnostics]) -> RunDiagnostics:
    """Per-run figures; tracks in the order they first appear, sorted for stable output."""
    tracks: dict[str, list[Diagnostics]] = {}
    for d in items:
        tracks.setdefault(d.track, []).append(d)
    return RunDiagnostics(
        n=len(items), overall=_group(list(items)), tracks={t: _group(ds) for t, ds in sorted(tracks.items())}
    )
