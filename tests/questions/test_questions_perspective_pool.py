"""Perspective's pool keeps only what its sampled targets read: it lives until the questions are
worded, so every labelled target's record text and cone would otherwise be held to the end."""

from __future__ import annotations

import pytest

from groundeval.graph.sql import GraphSQL
from groundeval.questions.subjects import SubjectIndex
from groundeval.store.store import Store
from groundeval.tracks.perspective import candidates as perspective_candidates
from groundeval.tracks.perspective.candidates import candidates, pool


@pytest.mark.parametrize(("pack", "sampled"), [("healthcare", True), ("tiny", False)])  # tiny: every target kept
def test_the_pool_holds_the_sampled_targets_only_and_yields_the_same_candidates(repo_root, pack, sampled, monkeypatch):
    store = Store.open(repo_root / "domain_packs" / pack)
    try:
        ev = store.manifest.evaluation
        gs = GraphSQL(store.cursor)
        p = pool(gs, ev, seed=3)
        assert p.targets is not None and p.labelled
        kept = {p.targets.rows[i][2] for i in p.labelled}
        assert set(p.targets.info) == kept == set(p.targets.wit)
        assert set(p.targets.gated) <= {str(i) for i in p.labelled}
        assert {a for eid in kept for a in p.targets.info[eid][5]} >= set(p.targets.created)
        display = {a: s.display_name or a for a, s in store.manifest.access.actors.items()}
        got, skipped = candidates(gs, ev, SubjectIndex(gs, display), seed=3, p=p)
        monkeypatch.setattr(perspective_candidates, "_kept", lambda t, labelled: t)  # the whole pool, unpruned
        whole = pool(gs, ev, seed=3)
        assert (len(whole.targets.info) > len(kept)) is sampled
        again, skipped_again = candidates(gs, ev, SubjectIndex(gs, display), seed=3, p=whole)
        assert [c.key for c in got] == [c.key for c in again] and skipped == skipped_again
        assert [c.payload["truth"] for c in got] == [c.payload["truth"] for c in again]
    finally:
        store.close()
