"""Counterfactual trajectory credit needs each side's own evidence (issue 30, item 7).

The shape: a cause and an effect that reference one shared artifact (the ticket both events
name) beside their own documents. Fetching only the shared one and answering "no causal link"
used to earn the full trajectory score on every positive; the paper presents exactly that
path as a failure.
"""

from __future__ import annotations

import pytest

from groundeval.contract.models import ScoringConfig
from groundeval.scoring.score import score
from scoring_builders import counterfactual, fetch, search, trace

NO_LINK = {
    "outcome_changed": False,
    "causal_mechanism": "none",
    "cause_event_id": "EV-C",
    "effect_event_id": "EV-E",
    "mechanism_direction": "no_causal_link",
}


def shared_question(cause=("ZD-7", "JIRA-42"), effect=("JIRA-42", "PM-1")):
    q = counterfactual(positive=True)
    truth = q.ground_truth.model_copy(
        update={
            "cause_artifacts": list(cause),
            "effect_artifacts": list(effect),
            "evidence_artifacts": sorted(set(cause) | set(effect)),
        }
    )
    return q.model_copy(update={"ground_truth": truth})


def traj(q, fetched, answer=NO_LINK):
    calls = [search("escalation")] + [fetch(a) for a in fetched]
    return score(q, trace(q, calls, answer), ScoringConfig())


def test_fetching_only_the_shared_artifact_earns_neither_side():
    s = traj(shared_question(), ["JIRA-42"])
    assert s.traj_components["cause_evidence"] == 0.0 and s.traj_components["effect_evidence"] == 0.0
    assert s.s_traj <= 0.4 and not s.answer_correct


@pytest.mark.parametrize(
    ("fetched", "cause", "effect"),
    [(["ZD-7"], 1.0, 0.0), (["PM-1"], 0.0, 1.0), (["ZD-7", "PM-1"], 1.0, 1.0), (["ZD-7", "JIRA-42", "PM-1"], 1.0, 1.0)],
)
def test_each_side_is_credited_for_its_own_artifact(fetched, cause, effect):
    s = traj(shared_question(), fetched)
    assert (s.traj_components["cause_evidence"], s.traj_components["effect_evidence"]) == (cause, effect)


def test_a_side_with_only_the_shared_artifact_is_credited_for_it():
    """When the shared ticket is all a side references, fetching it is that side's evidence."""
    s = traj(shared_question(cause=("JIRA-42",), effect=("JIRA-42", "PM-1")), ["JIRA-42"])
    assert (s.traj_components["cause_evidence"], s.traj_components["effect_evidence"]) == (1.0, 0.0)
