"""Byte identity of every output, for every bundled pack: questions, verifier findings,
traces, scores and reports of the oracle and of a baseline agent are compared against the
sha256 digests checked in beside this file (``golden_digests.json``).

A deliberate change of any output (question text, scoring, report layout) shows up here
as the list of files whose bytes changed; after checking that the change is the intended
one, rewrite the digests with ``GROUNDEVAL_UPDATE_GOLDEN=1`` and commit them with it.
A refactoring must leave them alone.

Wall-clock figures are the only outputs allowed to differ run to run: ``run.json`` is not
digested and each trace's ``timings`` are cleared before the traces are written, scored
and rendered (the HTML report shows latencies from them).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from groundeval.verifier import verify

from groundeval.agents.registry import get_agent
from groundeval.agents.runner import run_questions
from groundeval.questions.io import write_questions
from groundeval.report.render import write_reports
from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.io import write_scores
from groundeval.scoring.score import score
from groundeval.store.store import Store
from groundeval.trace.io import read_traces, trace_line
from groundeval.trace.model import Timings

REPO = Path(__file__).resolve().parents[2]
PACKS = REPO / "domain_packs"
ALL = sorted(p.parent.name for p in PACKS.glob("*/groundeval.yaml"))
DIGESTS = Path(__file__).parent / "golden_digests.json"
UPDATE = bool(os.environ.get("GROUNDEVAL_UPDATE_GOLDEN"))
# (agent, mode) per pack: the oracle and the keyword baseline (searches, so BM25 ranking is
# covered) everywhere; on tiny also the agents that break gates or skip retrieval, and context mode.
RUNS = [("oracle", "tool"), ("keyword", "tool")]
TINY_RUNS = RUNS + [("leaky", "tool"), ("lazy", "tool"), ("oracle", "context"), ("keyword", "context")]
BOOTSTRAP = 100  # the default 1000 would be half of this test's time; the code path is the same
OUTPUTS = ("traces.jsonl", "scores.jsonl", "report.json", "report.md", "report.html")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(store: Store, qs, agent: str, mode: str, out: Path) -> dict[str, str]:
    traces_path = run_questions(store, qs, get_agent(agent), mode=mode, out_dir=out, overwrite=True)
    traces = [t.model_copy(update={"timings": Timings()}) for t in read_traces(traces_path)]
    traces_path.write_text("".join(trace_line(t) + "\n" for t in traces), encoding="utf-8")
    config = store.manifest.evaluation.scoring
    by_id = {t.question_id: t for t in traces}
    scores = [score(q, by_id[q.id], config) for q in qs.questions if q.id in by_id]
    write_scores(out / "scores.jsonl", scores)
    report = aggregate(qs.questions, traces, scores, seed=qs.metadata.seed, config=config, bootstrap_samples=BOOTSTRAP)
    write_reports(report, out, questions=qs.questions, traces=traces, scores=scores, run={})
    return {f"{agent}-{mode}/{name}": _sha(out / name) for name in OUTPUTS}


def pack_digests(name: str, out: Path) -> dict[str, str]:
    """sha256 of every output file of one bundled pack."""
    pack = PACKS / name
    store = Store.open(pack)
    try:
        checked = verify(str(pack), level=4, store=store)
        found = json.dumps(checked.to_dict(), indent=2, sort_keys=True, ensure_ascii=False, default=str)
        (out / "verification.json").write_text(found.replace(str(REPO), "<repo>") + "\n", encoding="utf-8")
        qs = checked.questions
        assert qs is not None and checked.shared_store, "the verifier's dry run generates on the shared store"
        write_questions(qs, out / "questions.json")
        digests = {name: _sha(out / name) for name in ("verification.json", "questions.json")}
        for agent, mode in TINY_RUNS if name == "tiny" else RUNS:
            digests.update(_run(store, qs, agent, mode, out / f"{agent}-{mode}"))
    finally:
        store.close()
    return digests


@pytest.mark.parametrize("name", ALL)
def test_outputs_are_byte_identical(name, tmp_path):
    got = pack_digests(name, tmp_path)
    stored = json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.exists() else {}
    if UPDATE:
        stored[name] = got
        DIGESTS.write_text(json.dumps(dict(sorted(stored.items())), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    want = stored.get(name, {})
    changed = sorted(k for k in got.keys() | want.keys() if got.get(k) != want.get(k))
    assert not changed, (
        f"{name}: these outputs changed bytes: {changed}; if the change is intended, "
        "rerun with GROUNDEVAL_UPDATE_GOLDEN=1 and commit tests/packs/golden_digests.json"
    )
