"""Question generation: determinism, golden file, balance, leakage and answer schemas."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from groundeval.questions.generate import generate
from groundeval.questions.io import dumps, read_questions, write_questions
from groundeval.questions.leakage import circular, leaks
from groundeval.store.store import Store

GOLDEN = Path(__file__).parent / "golden" / "tiny_questions.json"
PACKS = Path(__file__).resolve().parents[2] / "domain_packs"
DOMAIN_PACKS = sorted(p for p in PACKS.iterdir() if (p / "groundeval.yaml").exists() and p.name != "tiny")


@pytest.fixture(scope="module")
def tiny_set(tiny_pack):
    return generate(Store.open(tiny_pack))


def _cli_generate(pack: Path, out: Path, hashseed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    subprocess.run(
        [sys.executable, "-m", "groundeval.cli.main", "generate", str(pack), "-o", str(out)],
        check=True,
        env=env,
        capture_output=True,
    )
    return out.read_bytes()


def test_byte_identical_under_shuffle_and_hashseed(tmp_path, tiny_pack):
    pack = PACKS / "legal" if (PACKS / "legal" / "groundeval.yaml").exists() else tiny_pack
    shuffled = tmp_path / "shuffled"
    shutil.copytree(pack, shuffled)
    events = shuffled / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines(keepends=True)
    random.Random(3).shuffle(lines)
    events.write_text("".join(lines), encoding="utf-8")
    a = _cli_generate(pack, tmp_path / "a.json", "0")
    b = _cli_generate(shuffled, tmp_path / "b.json", "4242")
    assert a == b
    assert json.loads(a)["questions"], "the pack produced no questions"


def test_golden_tiny(tiny_set, tmp_path):
    text = dumps(tiny_set)
    if os.environ.get("GROUNDEVAL_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), "set GROUNDEVAL_UPDATE_GOLDEN=1 to accept a change"


def test_tiny_expected_records(tiny_set):
    by = {(q.track, q.bucket): q for q in tiny_set.questions}
    cf_neg = by[("counterfactual", "negative")].ground_truth
    assert (cf_neg.cause_event_id, cf_neg.effect_event_id, cf_neg.mechanism_direction) == ("e7", "e8", "no_causal_link")
    absence = by[("silence", "absence")].ground_truth
    assert absence.trigger_event_id == "e7" and not absence.exists
    assert "JIRA-43" in absence.expected_search_space and "PM-43" not in absence.expected_search_space
    # as-of reaches every artifact the answer relies on
    for q in tiny_set.questions:
        if q.track == "counterfactual":
            assert q.as_of.isoformat() >= "2026-03-03"


def test_roundtrip_and_ids(tiny_set, tmp_path):
    path = write_questions(tiny_set, tmp_path / "q.json")
    assert read_questions(path) == tiny_set
    ids = [q.id for q in tiny_set.questions]
    assert len(ids) == len(set(ids))
    assert tiny_set.metadata.contract_digest and tiny_set.metadata.seed == 7


def test_seed_changes_order_not_labels(tiny_pack):
    store = Store.open(tiny_pack)
    a, b = generate(store, seed=1), generate(store, seed=2)
    assert [q.id for q in a.questions] != [q.id for q in b.questions]


def _oracle_answer(q) -> dict:
    t = q.ground_truth
    if q.track == "perspective":
        return {
            "could_actor_have_known": t.could_actor_have_known,
            "evidence_artifacts": t.evidence_artifacts,
            "blocked_subsystems": t.blocked_subsystems,
        }
    if q.track == "counterfactual":
        return {
            "outcome_changed": t.outcome_changed,
            "causal_mechanism": t.causal_mechanism,
            "cause_event_id": t.cause_event_id,
            "effect_event_id": t.effect_event_id,
            "mechanism_direction": t.mechanism_direction,
            "actors": t.actors,
            "evidence_artifacts": t.evidence_artifacts,
        }
    return {"exists": t.exists, "evidence_artifacts": t.evidence_artifacts}


@pytest.mark.parametrize("pack", DOMAIN_PACKS, ids=lambda p: p.name)
def test_domain_packs_balanced(pack):
    qs = generate(Store.open(pack))
    counts = qs.metadata.counts
    audit = qs.metadata.shortcut_audit
    ev = Store.open(pack).manifest.evaluation
    for q in qs.questions:
        jsonschema.validate(_oracle_answer(q), q.answer_schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**_oracle_answer(q), "leak": 1}, q.answer_schema)
        ids = [
            q.ground_truth.model_dump().get(k)
            for k in ("cause_event_id", "effect_event_id", "target_event_id", "trigger_event_id")
        ]
        assert not any(i and f" {i} " in f" {q.text} " for i in ids)
    if counts["perspective"]["total"] >= 20:
        assert set(counts["perspective"]["buckets"]) == {"positive", "negative_permission", "negative_temporal"}
        assert audit["perspective"]["best_trivial"] <= 0.6
    if counts["silence"]["total"] >= 6:
        assert set(counts["silence"]["buckets"]) == {"absence", "presence"}
        assert audit["silence"]["best_trivial"] <= 0.6
    if counts["counterfactual"]["total"] >= 6:
        assert counts["counterfactual"]["buckets"].get("negative", 0) > 0
        # the configured negative ratio bounds always-yes/no; no surface feature may beat it
        base = max(0.6, audit["counterfactual"]["always_yes"], audit["counterfactual"]["always_no"])
        for s in ("majority_per_actor", "majority_per_event_type", "majority_per_template"):
            assert audit["counterfactual"][s] <= base + 1e-9
        if 0.4 <= ev.counterfactual_negative_ratio <= 0.6:
            assert audit["counterfactual"]["best_trivial"] <= 0.6


def test_leakage_validator():
    assert leaks("Was PM-42 written?", ids=["PM-42"])
    assert not leaks("Was a postmortem for INC-42 written?", ids=["PM-42", "e4"])
    assert not leaks("the theme of e40", ids=["e4"])
    assert leaks("There is no causal link here")
    assert leaks("Did customer pressure cause it?", vocabulary=["customer pressure"])
    assert leaks("was escalation_drives_resolution at play", vocabulary=["escalation_drives_resolution"])
    assert circular("the incident INC-42 had not been resolved", "the incident INC-42 resolved")
    assert not circular("the escalation about INC-42 had not happened", "the postmortem for INC-42")


def test_prose_hook_validated_with_fallback(tiny_pack):
    store = Store.open(tiny_pack)
    calls = []

    def leaky(request):
        calls.append(request)
        assert "ground_truth" not in request and "bucket" not in request
        return "The answer is yes, see PM-42"

    qs = generate(store, prose=leaky)
    assert calls and all(q.meta["text_source"] == "template" for q in qs.questions)
    good = generate(store, prose=lambda r: "Reworded: " + r["text"])
    assert all(q.text.startswith("Reworded: ") for q in good.questions)


def test_generate_restores_the_cycle_collector(tiny_pack):
    import gc

    store = Store.open(tiny_pack)
    first = dumps(generate(store))
    assert gc.isenabled()
    gc.disable()
    try:
        assert dumps(generate(store)) == first
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_one_duckdb_thread_for_a_small_log_same_questions(tiny_pack, monkeypatch):
    """A log within one row group is generated on one DuckDB thread: the same questions as on
    the database's own threads, and the setting is the database's again afterwards."""
    import groundeval.questions.generate as gen

    store = Store.open(tiny_pack)
    threads = lambda: store.query("SELECT current_setting('threads')")[0][0]  # noqa: E731
    before = threads()
    seen = []
    real = gen._generate
    monkeypatch.setattr(gen, "_generate", lambda *a: seen.append(threads()) or real(*a))
    small = dumps(generate(store))
    monkeypatch.setattr(gen, "ROW_GROUP", 0)  # every log "large": DuckDB's own threads
    large = dumps(generate(store))
    assert small == large
    assert seen == [1, before] and threads() == before


def test_one_duckdb_thread_restores_the_callers_setting_even_on_an_error(tiny_pack, monkeypatch):
    """The database's threads as the caller set them, after a generation that raised too."""
    import groundeval.questions.generate as gen

    store = Store.open(tiny_pack)
    store.query("SET threads = 3")

    def fails(*_a):
        assert store.query("SELECT current_setting('threads')")[0][0] == 1
        raise RuntimeError("boom")

    monkeypatch.setattr(gen, "_generate", fails)
    with pytest.raises(RuntimeError, match="boom"):
        generate(store)
    assert store.query("SELECT current_setting('threads')")[0][0] == 3


@pytest.mark.parametrize("pack", ["tiny", "legal"])
def test_candidates_reuse_the_generators_subject_requests(pack, tiny_pack):
    """Each track's candidates are the same whether they reuse the requests the generator
    resolved (``ctx.requests``) or make their own."""
    import dataclasses

    import groundeval.questions.generate as gen
    from groundeval.tracks import tracks

    path = tiny_pack if pack == "tiny" else PACKS / pack
    store = Store.open(path)
    specs = tracks()
    ctx, pools = gen._context(store, store.manifest.evaluation.seed, None, specs)
    assert ctx.requests
    alone = dataclasses.replace(ctx, requests={})
    for t in specs:
        reused, own = t.candidates(ctx, pools[t.name]), t.candidates(alone, pools[t.name])
        assert [(c.key, c.bucket, c.label, c.payload) for c in reused[0]] == [
            (c.key, c.bucket, c.label, c.payload) for c in own[0]
        ]
        assert reused[1] == own[1]


def test_one_duckdb_thread_with_generations_at_once_on_one_database(tiny_pack, tmp_path):
    """Two stores on one ``--db`` file share DuckDB's threads setting: generations on both at
    once give the same questions, none waits forever, and the setting is the caller's after."""
    import threading

    db = tmp_path / "shared.duckdb"
    first, second = Store.open(tiny_pack, db=db), Store.open(tiny_pack, db=db)
    second.query("SET threads = 3")
    assert first.query("SELECT current_setting('threads')")[0][0] == 3  # one database
    expected = dumps(generate(first))
    got: list[str] = []

    def run(store: Store) -> None:
        got.extend(dumps(generate(store)) for _ in range(3))

    workers = [threading.Thread(target=run, args=(s,)) for s in (first, second)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert not any(w.is_alive() for w in workers)
    assert got == [expected] * 6
    assert first.query("SELECT current_setting('threads')")[0][0] == 3
