"""Shortcut audit: the text-only naive Bayes, the grouped majority, the shared-identifier rule,
determinism, and the verifier's GE407/GE408 findings built from an audit."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.questions.audit import (
    ALL_STRATEGIES,
    id_shape,
    id_tokens,
    shares_identifier,
    shortcut_audit,
    shortcut_problems,
    text_features,
)
from groundeval.questions.model import (
    CounterfactualTruth,
    PerspectiveTruth,
    Question,
    QuestionSet,
    QuestionSetMeta,
    SilenceTruth,
)
from groundeval.verifier.rules.dryrun import shortcut_findings

AS_OF = datetime(2026, 3, 5, tzinfo=timezone.utc)


def make_q(
    i: int,
    track: str,
    text: str,
    label: bool,
    *,
    actor: str = "morgan",
    event_type: str = "incident",
    template: str | None = None,
) -> Question:
    if track == "perspective":
        truth = PerspectiveTruth(
            could_actor_have_known=label,
            target_event_id=f"e{i}",
            target_event_type=event_type,
            target_artifacts=[],
            evidence_artifacts=[],
            blocked_subsystems=[],
        )
    elif track == "counterfactual":
        truth = CounterfactualTruth(
            outcome_changed=label,
            causal_mechanism="m" if label else "none",
            mechanism_direction="cause_to_effect" if label else "no_causal_link",
            cause_event_id=f"c{i}",
            effect_event_id=f"x{i}",
            cause_event_type="escalation",
            effect_event_type=event_type,
        )
    else:
        truth = SilenceTruth(
            exists=label,
            spec="s",
            trigger_event_id=f"t{i}",
            trigger_event_type=event_type,
            response_event_type="postmortem",
            expected_search_space=[],
        )
    return Question(
        id=f"q_{track[:2]}{i:05d}",
        track=track,
        bucket="positive" if label else "negative",
        difficulty="easy",
        text=text,
        actor=actor,
        as_of=AS_OF,
        answer_schema={},
        ground_truth=truth,
        template_id=template or f"{track}.1",
        meta={"event_type": event_type},
    )


def question_set(questions: list[Question]) -> QuestionSet:
    return QuestionSet(
        metadata=QuestionSetMeta(contract_digest="d", pack="p", seed=1, shortcut_audit=shortcut_audit(questions)),
        questions=questions,
    )


FILLER = ["escalation", "ticket", "review", "deploy", "meeting", "report", "audit", "change", "alert", "memo"]


def leaky_set(n: int = 60, seed: int = 5) -> list[Question]:
    """Perspective questions whose wording gives the label away ('restricted' only on no)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        label = i % 2 == 0
        noun = rnd.choice(FILLER)
        tail = "from the sources morgan could read" if label else "from the restricted sources morgan lacked"
        out.append(
            make_q(
                i,
                "perspective",
                f"As of 2026-03-05 could morgan have learned of the {noun} {tail}?",
                label,
                actor=rnd.choice(["ann", "bob", "cyd"]),
            )
        )
    return out


def random_set(n: int = 200, seed: int = 11, track: str = "silence") -> list[Question]:
    """Texts drawn independently of labels."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        words = " ".join(rnd.choice(FILLER) for _ in range(6))
        out.append(
            make_q(
                i,
                track,
                f"Was there a {words} for INC-{rnd.randint(1, 999)}?",
                rnd.random() < 0.5,
                event_type=rnd.choice(FILLER[:4]),
                template=f"{track}.{rnd.randint(1, 3)}",
            )
        )
    return out


def shared_id_set(n: int = 40, flip: bool = False) -> list[Question]:
    """Counterfactuals whose premise and effect name one incident exactly when the answer is yes."""
    out = []
    for i in range(n):
        label = i % 2 == 0
        effect = 100 + i if label else 500 + i
        text = (
            f"Suppose INC-{100 + i} had not been escalated. Would the postmortem PM-{effect} have been written sooner?"
        )
        out.append(make_q(i, "counterfactual", text, label != flip, template=f"counterfactual.{i % 3 + 1}"))
    return out


def mixed_set() -> list[Question]:
    return leaky_set(40) + random_set(30, track="silence") + shared_id_set(26)


# --------------------------------------------------------------------------- features


def test_id_tokens_and_shapes():
    assert id_tokens("Was PM-42 written for INC-42 (CRM-1001, v1.1, e7) on 2026-03-05 08:00 in case no 104?") == [
        "PM-42",
        "INC-42",
        "CRM-1001",
        "v1.1",
        "e7",
    ]
    assert id_shape("INC-00679") == "AAA-99999" and id_shape("v1.1") == "A9.9"
    assert "s:AAA-99" in text_features("the INC-42 incident") and "b:inc 42" in text_features("the INC-42 incident")


def test_shared_identifier_rule():
    assert shares_identifier("if INC-42 had not happened, would the INC-42 postmortem exist?")
    assert shares_identifier("if INC-42 had not happened, would PM-42 exist?")  # same number
    assert shares_identifier("if inc-42 had not happened, would INC-42 exist?")  # case-insensitive
    assert shares_identifier("INC-00042 and PM-42")  # leading zeros
    assert not shares_identifier("if INC-42 had not happened, would PM-43 exist?")
    assert not shares_identifier("as of 2026-03-05 08:00, in case 42 and 42 again")  # numbers are not ids


def test_shared_identifier_detects_premise_effect_shape():
    row = shortcut_audit(shared_id_set())["counterfactual"]
    assert row["shared_identifier_accuracy"] == 1.0 and row["shared_identifier"] == 1.0
    assert row["best_shortcut"] == 1.0
    # A reliably wrong rule is as informative: its flip scores 1.0.
    flipped = shortcut_audit(shared_id_set(flip=True))["counterfactual"]
    assert flipped["shared_identifier_accuracy"] == 0.0 and flipped["shared_identifier_flipped"] == 1.0
    assert flipped["shared_identifier"] == 1.0 and flipped["best_strategy"] == "shared_identifier"


# --------------------------------------------------------------------------- learned baselines


def test_text_that_predicts_the_label_is_learned_and_flagged():
    qs = question_set(leaky_set())
    row = qs.metadata.shortcut_audit["perspective"]
    assert row["cv"] == "5-fold" and row["questions"] == 60
    assert row["naive_bayes"] >= 0.9
    assert row["best_learned"] >= 0.9 and row["best_shortcut"] >= row["naive_bayes"]
    assert row["best_trivial"] <= 0.6  # no fixed strategy sees it: only the text does
    findings = shortcut_findings(shortcut_audit(qs.questions))
    assert [(f.rule, f.severity) for f in findings] == [("GE407", "error")]
    msg = findings[0].message
    assert msg.startswith(f"perspective: {row['best_strategy']} answers {row['best_shortcut']:.2f} of 60 ")
    assert "limit 0.60" in msg and findings[0].hint


def test_limit_and_min_questions():
    audit = shortcut_audit(leaky_set())
    assert shortcut_findings(audit, limit=1.0) == []  # below the limit: nothing
    small = shortcut_findings(audit, min_questions=61)  # too few: a note only
    assert [(f.rule, f.severity) for f in small] == [("GE408", "info")] and "not judged below 61" in small[0].message
    # A requested label skew raises the bar for that track only.
    assert shortcut_problems(audit, limit=0.6, floor={"perspective": 1.0}) == []


def test_text_independent_of_label_is_near_chance():
    row = shortcut_audit(random_set(200))["silence"]
    assert 0.35 <= row["naive_bayes"] <= 0.65
    assert 0.35 <= row["majority_per_event_type_template"] <= 0.65
    assert shortcut_findings({"silence": row}) == []


def test_leave_one_out_on_small_tracks():
    row = shortcut_audit(leaky_set(20))["perspective"]
    assert row["cv"] == "leave-one-out" and row["naive_bayes"] >= 0.9


def test_grouped_majority_is_held_out():
    # Every (event type, template) group holds one question: in-sample it would score 1.0.
    qs = [make_q(i, "silence", "was it written?", i % 2 == 0, event_type=f"t{i}") for i in range(40)]
    row = shortcut_audit(qs)["silence"]
    assert row["majority_per_event_type"] == 1.0  # in-sample upper bound, as before
    assert row["majority_per_event_type_template"] <= 0.6  # held out: nothing to learn


# --------------------------------------------------------------------------- determinism


def _dump(audit: dict) -> str:
    return json.dumps(audit, sort_keys=True)


def test_invariant_to_question_order():
    qs = mixed_set()
    expected = _dump(shortcut_audit(qs))
    for seed in range(3):
        shuffled = qs[:]
        random.Random(seed).shuffle(shuffled)
        assert _dump(shortcut_audit(shuffled)) == expected


def test_identical_under_pythonhashseed():
    here = Path(__file__).parent
    script = (
        f"import sys, json; sys.path.insert(0, {str(here)!r}); import test_questions_audit as t; "
        "from groundeval.questions.audit import shortcut_audit; "
        "print(json.dumps(shortcut_audit(t.mixed_set()), sort_keys=True))"
    )
    outs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(
            subprocess.run(
                [sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True
            ).stdout.strip()
        )
    assert outs == {_dump(shortcut_audit(mixed_set()))}


def test_floats_rounded_to_four_places():
    for row in shortcut_audit(mixed_set()).values():
        for s in ALL_STRATEGIES:
            assert row[s] == round(row[s], 4)


# --------------------------------------------------------------------------- properties

_TEXTS = [
    "could ann know of INC-1?",
    "could bob know of INC-2 and PM-2?",
    "was a memo written?",
    "would PM-7 have changed if INC-7 had not?",
    "did the audit follow?",
    "v1.1 then v1.2",
]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["perspective", "counterfactual", "silence"]),
            st.sampled_from(_TEXTS),
            st.booleans(),
            st.sampled_from(["ann", "bob"]),
        ),
        min_size=1,
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_accuracies_bounded_and_order_free(rows, rnd):
    qs = [make_q(i, track, text, label, actor=actor) for i, (track, text, label, actor) in enumerate(rows)]
    audit = shortcut_audit(qs)
    for row in audit.values():
        for s in ALL_STRATEGIES + ("best_trivial", "best_learned", "best_shortcut", "shared_identifier_accuracy"):
            assert 0.0 <= row[s] <= 1.0
        assert row["best_shortcut"] == max(row[s] for s in ALL_STRATEGIES) == row[row["best_strategy"]]
    shuffled = qs[:]
    rnd.shuffle(shuffled)
    assert _dump(shortcut_audit(shuffled)) == _dump(audit)
