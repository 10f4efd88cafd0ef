"""Level 4: statistics from the real generator, the shortcut audit, degraded modes."""

from __future__ import annotations

import sys

import pytest

from groundeval import verifier
from verifier_drafts import TINY, PackDraft
from groundeval.errors import ContractError
from groundeval.verifier.rules.dryrun import audit_problems

pytest.importorskip("groundeval.questions.generate")


@pytest.mark.slow
def test_generation_statistics_match_the_generator():
    from groundeval.questions.generate import generate
    from groundeval.store.store import Store

    qs = generate(Store.open(TINY))
    result = verifier.verify(TINY, level=4)
    gen = result.stats["generation"]
    assert gen["total"] == len(qs.questions)
    assert sum(gen["tracks"].values()) == len(qs.questions)
    assert len(result.by_rule("GE401")) == 3
    assert set(gen["shortcut_audit"]) <= {"perspective", "counterfactual", "silence"}
    assert result.facts["questions"] == gen["tracks"]


def test_shortcut_audit_thresholds():
    row = {
        "questions": 40,
        "always_yes": 0.5,
        "always_no": 0.5,
        "majority_per_actor": 0.55,
        "majority_per_event_type": 0.6,
        "majority_per_template": 0.95,
    }
    lines = audit_problems({"perspective": row}, {"perspective": 0.5})
    assert lines == ["perspective: majority_per_template scores 0.95 against 0.50 for a constant answer"]
    # Small sets: in-sample majorities are near 1 by chance, so features are not judged.
    assert audit_problems({"silence": dict(row, questions=2)}, {"silence": 0.5}) == []
    # A skewed label balance beyond what was requested is a shortcut; the requested skew is not.
    skewed = dict(row, always_yes=0.9, always_no=0.1, majority_per_template=0.9)
    assert any("always the same" in x for x in audit_problems({"counterfactual": skewed}, {"counterfactual": 0.5}))
    assert audit_problems({"counterfactual": skewed}, {"counterfactual": 0.8}) == []


def test_shortcut_finding_is_emitted(monkeypatch):
    import groundeval.questions.audit as audit

    monkeypatch.setattr(
        audit,
        "shortcut_audit",
        lambda qs: {"perspective": {"questions": 50, "always_yes": 0.5, "always_no": 0.5, "majority_per_actor": 0.9}},
    )
    result = verifier.verify(TINY, level=4)
    assert [f.message for f in result.by_rule("GE402")] == [
        "perspective: majority_per_actor scores 0.90 against 0.50 for a constant answer"
    ]


def _leaky_audit(n: int) -> dict:
    return {
        "counterfactual": {
            "questions": n,
            "always_yes": 0.5,
            "always_no": 0.5,
            "majority_per_actor": 0.5,
            "majority_per_event_type": 0.5,
            "majority_per_template": 0.5,
            "best_trivial": 0.5,
            "naive_bayes": 0.55,
            "majority_per_event_type_template": 0.5,
            "best_learned": 0.55,
            "shared_identifier_accuracy": 0.0,
            "shared_identifier_flipped": 1.0,
            "shared_identifier": 1.0,
            "best_shortcut": 1.0,
            "best_strategy": "shared_identifier",
        }
    }


@pytest.mark.slow
def test_shortcut_over_the_limit_is_an_error(monkeypatch, tmp_path):
    import groundeval.questions.audit as audit

    monkeypatch.setattr(audit, "shortcut_audit", lambda qs: _leaky_audit(40))
    result = verifier.verify(TINY, level=4)
    f = result.by_rule("GE407")
    assert [(x.severity, x.message.split(" — ")[0]) for x in f] == [
        ("error", "counterfactual: shared_identifier answers 1.00 of 40 question(s) without evidence (limit 0.60)")
    ]
    assert "identifier" in f[0].message.split(" — ")[1] and f[0].hint and result.failed("error")
    # The manifest's thresholds rule: a higher limit silences it, a higher minimum turns it into a note.
    d = PackDraft(TINY)
    d.manifest["evaluation"]["shortcut_limit"] = 1.0
    assert not verifier.verify(d.write(tmp_path / "lenient"), level=4).by_rule("GE407")
    d = PackDraft(TINY)
    d.manifest["evaluation"]["shortcut_min_questions"] = 41
    noted = verifier.verify(d.write(tmp_path / "few"), level=4)
    assert not noted.by_rule("GE407")
    assert [x.severity for x in noted.by_rule("GE408")] == ["info"]


def test_shortcut_below_min_questions_is_a_note(monkeypatch):
    import groundeval.questions.audit as audit

    monkeypatch.setattr(audit, "shortcut_audit", lambda qs: _leaky_audit(12))
    result = verifier.verify(TINY, level=4)
    assert not result.by_rule("GE407")
    assert [x.message for x in result.by_rule("GE408")] == [  # no figure: 12 questions cannot support one
        "counterfactual: 12 question(s) are too few for a shortcut figure; an answer-blind strategy reaches the "
        "limit (0.60) on them, which is not judged below 30 questions"
    ]


def test_empty_bucket_after_generation(tmp_path):
    d = PackDraft(TINY)
    d.manifest["evaluation"]["perspective_actors"] = ["carol"]
    d.manifest["access"]["roles"]["hr_ops"] = {"external": True}
    result = verifier.verify(d.write(tmp_path / "p"), level=4)
    assert any("positive" in f.message for f in result.by_rule("GE404"))
    assert not verifier.verify(TINY, level=4).by_rule("GE404")


def test_generator_unavailable_degrades_to_info(monkeypatch):
    monkeypatch.setitem(sys.modules, "groundeval.questions.generate", None)
    result = verifier.verify(TINY, level=4)
    assert [f.severity for f in result.by_rule("GE405")] == ["info"]
    assert not result.failed("warning")


def test_generator_rejection_is_an_error(monkeypatch):
    import groundeval.questions.generate as gen

    def refuse(store, **kw):
        raise ContractError.single("groundeval.yaml", "no can do", field="evaluation.seed")

    monkeypatch.setattr(gen, "generate", refuse)
    result = verifier.verify(TINY, level=4)
    f = result.by_rule("GE406")
    assert [x.message for x in f] == ["no can do"] and f[0].path == "$.evaluation.seed"
