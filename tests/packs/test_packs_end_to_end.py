"""Issue 8's bar for every bundled pack, in one parametrised test: the contract verifies
with zero errors and zero warnings, generation fills every bucket, and the oracle reaches
S_adj = 1.0 on every question — through the one-command main job (`evaluate`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundeval.api import evaluate

PACKS = Path(__file__).resolve().parents[2] / "domain_packs"
ALL = sorted(p.parent.name for p in PACKS.glob("*/groundeval.yaml"))
BUCKETS = {
    "perspective": {"positive", "negative_permission", "negative_temporal"},
    "counterfactual": {"positive", "negative"},
    "silence": {"absence", "presence"},
}


@pytest.mark.parametrize("name", ALL)
def test_pack_verifies_clean_fills_every_bucket_and_oracle_is_perfect(name, tmp_path):
    result = evaluate(PACKS / name, "oracle", tmp_path / name)
    findings = json.loads((tmp_path / name / "verification.json").read_text())["findings"]
    loud = [f for f in findings if f["severity"] in ("error", "warning")]
    assert loud == [], loud
    got = {track: {q.bucket for q in result.questions.questions if q.track == track} for track in BUCKETS}
    assert got == BUCKETS
    assert len(result.scores) == len(result.questions.questions)
    imperfect = [(s.question_id, s.s_adj) for s in result.scores if s.s_adj != 1.0]
    assert imperfect == []
