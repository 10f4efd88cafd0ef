"""Issue 19: the ``paper`` scoring profile rebuilds the preprint's three worked examples
(§8.1-8.3) as traces and gets its 0.191 / 0.230 / 0.350; the default profile's figures
for the same traces are pinned too (docs/scoring.md, "Scoring profiles", says why they
differ).

The paper text is not available to us: the traces are reconstructed from the original
release's scoring code and the figures quoted in issue 19. What the paper leaves open is
an assumption here, each stated where the trace is built:

* §8.1 Silence — the postmortem exists; the agent runs one confluence search whose hits
  (metadata) include one of the 11 artifacts of the expected search space, fetches
  nothing and answers "no". (0.191 needs search-space coverage 1/11 in the original,
  whose retrieval counts search hits.)
* §8.2 Perspective — a permission-negative question for carol (hr_ops): 9 search/fetch
  calls — two valid searches with hits, then three fetches of the zoom transcript
  (subsystem her role lacks) and four of a restricted HR note, all refused — and the
  answer "true" citing the transcript. The paper's "7 violations" are the 7 actor-gate
  violations (calls outside carol's visibility cone), 3 of which are also subsystem
  violations; no refused call is followed by one that returned something.
* §8.3 Counterfactual — the agent says the outcome would have changed, names the right
  cause event but the temporally adjacent wrong effect event, the right direction, the
  two true actors plus one more, and a plausible mechanism outside the declared
  vocabulary; its search hits and one fetch miss the cause and effect artifacts.
"""

from __future__ import annotations

import pytest
from scoring_builders import counterfactual, fetch, question, search, silence, trace

from groundeval.questions.model import PerspectiveTruth
from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.profiles import score


def silence_example():
    space = ["JIRA-43"] + [f"PM-{i}" for i in range(32, 42)]  # 11 artifacts
    q = silence(True, qid="s-paper", space=space)
    t = trace(q, [search("postmortem INC-43", subsystem="confluence", hits=("PM-41", "SL-9"))], {"exists": False})
    return q, t


def perspective_example():
    truth = PerspectiveTruth(
        could_actor_have_known=False,
        target_event_id="E-REVIEW",
        target_event_type="performance_review",
        target_artifacts=["hr-note-1", "zoom-1"],
        evidence_artifacts=[],
        blocked_subsystems=["zoom"],
    )
    q = question("perspective", truth, qid="p-paper", bucket="negative_permission", actor="carol")
    calls = [search("performance review", hits=("slack-3", "jira-8")), search("review notes", hits=("slack-4",))]
    calls += [fetch("zoom-1", flags=["subsystem"])] * 3 + [fetch("hr-note-1", flags=["actor"])] * 4
    answer = {"could_actor_have_known": True, "evidence_artifacts": ["zoom-1"], "blocked_subsystems": []}
    return q, trace(q, calls, answer)


def counterfactual_example():
    q = counterfactual(True, qid="c-paper")
    answer = {
        "outcome_changed": True,
        "causal_mechanism": "workload_relief",
        "cause_event_id": "EV-C",
        "effect_event_id": "EV-F",
        "mechanism_direction": "cause_to_effect",
        "actors": ["alice", "dave", "erin"],
        "evidence_artifacts": [],
    }
    return q, trace(q, [search("escalation", hits=("SL-3", "SL-4")), fetch("SL-4")], answer)


EXAMPLES = {"silence": silence_example, "perspective": perspective_example, "counterfactual": counterfactual_example}
PAPER = {"silence": 0.191, "perspective": 0.230, "counterfactual": 0.350}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_paper_profile_gives_the_papers_figures(name):
    q, t = EXAMPLES[name]()
    s = score(q, t, profile="paper")
    assert s.profile == "paper"
    assert round(s.s_combined, 3) == PAPER[name]
    assert s.s_adj == s.s_combined and s.penalty == 1.0  # no compliance factor per question


def test_paper_profile_terms_of_each_example():
    s = score(*silence_example(), profile="paper")
    # answer 0; trajectory 0.5 * 1/11 + 0.3 * 1/11 + 0.2 * 1 = 0.2727; 0.7 * 0.2727 = 0.1909
    assert (s.s_answer, s.s_traj, s.s_combined) == (0.0, 0.2727, 0.1909)
    assert s.traj_components["search_space_coverage"] == pytest.approx(1 / 11)

    p = score(*perspective_example(), profile="paper")
    # 0.30 * (1 - 7/9) + 0.25 * (1 - 3/9) + 0.20 * 0 + 0.15 * 1 + 0.10 * 0 = 0.3833; 0.6 * 0.3833 = 0.23
    assert (p.s_answer, p.s_traj, p.s_combined) == (0.0, 0.3833, 0.23)
    assert (p.v_bad, p.v_units) == (7, 9) and p.traj_components["dead_end_recovery"] == 0.0

    c = score(*counterfactual_example(), profile="paper")
    # answer 0.2 outcome + 0.2 cause + 0.1 direction + 0.05 actors = 0.55; trajectory 0.15 (horizon only)
    assert (c.s_answer, c.s_traj, c.s_combined) == (0.55, 0.15, 0.35)
    assert not c.answer_correct


def test_paper_profile_factor_only_at_run_level_over_actor_gate_calls():
    scores = [score(*EXAMPLES[n](), profile="paper") for n in ("perspective", "counterfactual", "silence")]
    report = aggregate(None, None, scores, bootstrap_samples=0, profile="paper")
    assert report.profile == "paper" and '"profile":"paper"' in report.model_dump_json()
    # Perspective track: 0.23 * (1 - 7/9)^2; the other tracks have no actor gate: no factor
    assert report.tracks["perspective"].run_s_adj == pytest.approx(0.23 * (2 / 9) ** 2)
    assert report.tracks["counterfactual"].run_s_adj == 0.35
    assert report.tracks["silence"].run_s_adj == 0.1909
    # overall: mean combined * (1 - 7/12)^2 — 7 actor-gate calls of 12 search/fetch calls
    assert report.overall.run_s_adj == pytest.approx((0.1909 + 0.23 + 0.35) / 3 * (5 / 12) ** 2)


def test_default_profile_on_the_same_traces():
    """What groundeval's own formulas give, and why (docs/scoring.md):

    * Silence 0.21: the explicit confluence search earns the subsystem-search term (0.3 of
      the trajectory) while search hits earn no coverage (metadata is not a checked
      document): 0.7 * (0.7 * 0 + 0.3 * 1).
    * Perspective 0.354 / 0.032: looking earns evidence coverage on a negative (0.5), the
      cited transcript was never validly fetched (grounding 0), gate discipline 1 - v with
      v = 7 flagged of 10 recorded calls (submit_answer included); the factor
      (1 - 0.7)^2 = 0.09 applies per question.
    * Counterfactual 0.417: six equally weighted answer components (3 right + actors
      Dice 0.8) = 0.633, trajectory 0.2 (horizon kept; no cause/effect fetched, mechanism
      outside the vocabulary).
    """
    s = score(*silence_example())
    p = score(*perspective_example())
    c = score(*counterfactual_example())
    assert s.profile == "default" and "profile" not in s.model_dump(mode="json")
    assert (s.s_combined, s.s_adj) == (0.21, 0.21)
    assert (p.s_combined, p.violation_rate, round(p.s_adj, 3)) == (0.354, 0.7, 0.032)
    assert round(c.s_adj, 3) == 0.417 and c.answer_components["actors"] == 0.8
