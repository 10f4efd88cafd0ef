"""Process diagnostics: each criterion on traces built through the real runtime, the run
summary, the CLI, and determinism (same trace, same bytes, whatever the key order)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from groundeval.agents.baselines import KeywordAgent, LazyAgent, LeakyAgent
from groundeval.agents.oracle import OracleAgent
from groundeval.agents.runner import run_episode
from groundeval.rl.diagnostics import VERDICTS, diagnose, required_evidence, summarize
from groundeval.rl.hacking import answer_key, build_answer
from groundeval.runtime.episode import Episode
from groundeval.scoring.score import score
from groundeval.trace.model import Trace


def diag(q, trace):
    return diagnose(q, trace, score(q, trace))


def with_evidence(qs):
    return next(
        q
        for q in qs.questions
        if q.ground_truth.model_dump().get("evidence_artifacts")
        and "could_actor_have_known" in q.answer_schema["properties"]
    )


def test_the_oracle_path_is_clean_everywhere(tiny):
    store, qs = tiny
    for q in qs.questions:
        d = diag(q, run_episode(store, q, OracleAgent()))
        assert (d.redundant_calls, d.calls_after_evidence, d.post_submit_calls) == (0, 0, 0), q.id
        assert d.cited_not_fetched == [] and d.negative_claim_searched
        assert d.verdict == "consistent" and d.process_score == 1.0


def test_redundant_late_and_post_submit_calls_are_counted(tiny):
    store, qs = tiny
    q = with_evidence(qs)
    evidence = required_evidence(q)
    with Episode(store, q) as ep:
        ep.fetch(evidence[0])
        ep.fetch(evidence[0])  # redundant, and after the evidence was in hand
        for aid in evidence[1:]:
            ep.fetch(aid)
        ep.search("checkout outage")  # after the evidence was in hand
        ep.search("checkout outage")  # redundant and late
        ep.submit(answer_key(q))
        ep.search("anything")  # after the answer
    d = diag(q, ep.trace)
    assert d.redundant_calls == 2
    assert d.calls_after_evidence == (3 if len(evidence) == 1 else 2)
    assert d.post_submit_calls == 1 and not d.process_consistent and d.outcome_consistent
    assert d.verdict == "outcome_only" and d.process_score < 1.0


def test_negative_claim_without_a_search_and_unread_citations(tiny):
    store, qs = tiny
    lazy = [diag(q, run_episode(store, q, LazyAgent())) for q in qs.questions]
    assert all(d.negative_claim and not d.negative_claim_searched for d in lazy)
    assert all(d.verdict == "inconsistent" for d in lazy)
    q = with_evidence(qs)
    with Episode(store, q) as ep:
        ep.search("checkout")
        ep.submit(build_answer(q.answer_schema, True, required_evidence(q)))
    d = diag(q, ep.trace)
    assert d.cited_not_fetched == required_evidence(q) and d.fetched == []
    assert not d.outcome_consistent and d.verdict == "inconsistent"


def test_gate_breaking_path_is_process_inconsistent(tiny):
    store, qs = tiny
    gated = 0
    for q in qs.questions:
        trace = run_episode(store, q, LeakyAgent())
        d = diag(q, trace)
        if any(c.flags for c in trace.calls):
            gated += 1
            # it cites what the gates refused: neither the path nor the answer holds
            assert not d.process_consistent and d.cited_not_fetched and d.verdict == "inconsistent"
    assert gated


def test_run_summary_counts_match_the_items(tiny):
    store, qs = tiny
    items = [
        diag(q, run_episode(store, q, agent))
        for agent in (OracleAgent(), KeywordAgent(), LazyAgent())
        for q in qs.questions
    ]
    run = summarize(items).to_dict()
    assert run["n"] == len(items) == run["overall"]["n"]
    assert sum(run["overall"]["verdicts"].values()) == len(items)
    assert set(run["overall"]["verdicts"]) == set(VERDICTS)
    assert sum(g["n"] for g in run["tracks"].values()) == len(items)
    assert run["overall"]["redundant_calls"] == sum(d.redundant_calls for d in items)


def test_diagnostics_never_change_the_score(tiny):
    store, qs = tiny
    for q in qs.questions:
        trace = run_episode(store, q, KeywordAgent())
        before = score(q, trace).model_dump()
        diag(q, trace)
        assert score(q, trace).model_dump() == before


def test_same_trace_same_diagnostics_whatever_the_key_order(tiny):
    store, qs = tiny
    for q in qs.questions:
        trace = run_episode(store, q, KeywordAgent())
        data = json.loads(trace.model_dump_json())
        shuffled = Trace.model_validate(json.loads(json.dumps(data, sort_keys=True)))
        reordered = Trace.model_validate(dict(reversed(list(data.items()))))
        assert diag(q, trace) == diag(q, shuffled) == diag(q, reordered)


@pytest.mark.slow
def test_cli_diagnose_per_question_and_run(tmp_path, tiny_pack):
    cli = [sys.executable, "-m", "groundeval.cli.main"]
    subprocess.run(
        [*cli, "run", str(tiny_pack), "--agent", "keyword", "--out", str(tmp_path), "--quiet"],
        check=True,
        capture_output=True,
    )
    args = [
        *cli,
        "rl",
        "diagnose",
        str(tmp_path / "traces.jsonl"),
        "-q",
        str(tmp_path / "questions.json"),
        "--pack",
        str(tiny_pack),
        "--shaped",
    ]
    out = subprocess.run([*args, "--json"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert len(data["questions"]) == 21 and data["run"]["n"] == 21
    assert all(r["shaped_reward"] <= r["s_adj"] for r in data["questions"])
    scores = subprocess.run(
        [
            *cli,
            "score",
            str(tmp_path / "traces.jsonl"),
            "-q",
            str(tmp_path / "questions.json"),
            "--pack",
            str(tiny_pack),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert scores.returncode == 0
    s_adj = [json.loads(line)["s_adj"] for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert [r["s_adj"] for r in data["questions"]] == s_adj
    text = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    assert "process diagnostics per question" in text and "per run" in text
    bad = subprocess.run(
        [*cli, "rl", "diagnose", str(tmp_path / "nope.jsonl"), "-q", str(tmp_path / "questions.json")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
