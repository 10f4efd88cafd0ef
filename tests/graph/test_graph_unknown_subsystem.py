"""A silence spec may name a subsystem the pack does not have (the verifier warns: GE209).
The runtime refuses a search there as unknown, so the truth must not expect it: the honest
oracle still scores 1 (found on the original release's tiny pack, whose config names one)."""

from __future__ import annotations

import shutil

import yaml

import groundeval
from groundeval.agents.oracle import OracleAgent
from groundeval.agents.runner import run_episode
from groundeval.contract.packs import resolve_pack
from groundeval.store.store import Store


def test_a_subsystem_the_pack_lacks_is_not_expected(tmp_path):
    pack = tmp_path / "tiny"
    shutil.copytree(resolve_pack("tiny"), pack)
    manifest = pack / "groundeval.yaml"
    doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    for spec in doc["evaluation"]["silence_pairs"]:
        spec["search_space_subsystems"] = [*spec["search_space_subsystems"], "wiki-nobody-has"]
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")

    store = Store.open(pack)
    try:
        questions = groundeval.generate(store)
        silence = [q for q in questions.questions if q.track == "silence"]
        assert silence, "the pack still yields silence questions"
        for q in silence:
            assert "wiki-nobody-has" not in q.ground_truth.expected_subsystems
            assert q.ground_truth.expected_subsystems  # the pack's own subsystems are still expected
            trace = run_episode(store, q, OracleAgent())
            (s,) = groundeval.score(questions, [trace])
            assert s.s_adj == 1.0, (q.id, s)
    finally:
        store.close()
