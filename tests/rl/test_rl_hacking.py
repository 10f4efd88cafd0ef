"""The reward-hacking suite: no adversarial policy beats the honest oracle on any track of
any bundled pack or a synthetic org, and each stays inside its documented band."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import groundeval
from groundeval.agents.runner import run_episode
from groundeval.contract.packs import bundled_packs
from groundeval.rl.hacking import BANDS, HONEST, POLICIES, answer_key, hacking_table, policy, run_policy
from groundeval.runtime.episode import Episode
from groundeval.runtime.search_sql import fetch_index
from groundeval.scoring.score import score
from groundeval.synth.generate import write_org

PER_BUCKET = 2  # questions per (track, bucket) on the larger packs: the table's cost is episodes


def stratified(questions, k):
    """The first ``k`` questions of every (track, bucket), in question order: balanced like the set."""
    taken: dict[tuple[str, str], int] = {}
    out = []
    for q in questions:
        key = (q.track, q.bucket)
        if taken.get(key, 0) < k:
            taken[key] = taken.get(key, 0) + 1
            out.append(q)
    return out


def check_table(table, questions):
    tracks = {q.track for q in questions}
    assert {r.track for r in table.rows} == tracks
    assert {r.policy for r in table.rows} == {HONEST, *POLICIES}
    for r in table.rows:
        assert r.beats_oracle == 0, r
        assert r.mean_s_adj <= r.oracle_mean_s_adj, r
        if r.policy != HONEST:
            lo, hi = BANDS[r.policy]
            assert lo <= r.mean_s_adj <= hi, r
    assert not table.failures


@pytest.fixture(scope="module")
def synth_org(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth") / "org"
    write_org(out, events=1000, seed=3, jobs=1)
    store = groundeval.load(out)
    qs = groundeval.generate(store)
    yield store, qs
    store.close()


@pytest.mark.slow
def test_every_policy_on_the_whole_tiny_pack(tiny):
    store, qs = tiny
    table = hacking_table(store, qs.questions, config=store.manifest.evaluation.scoring, source="tiny")
    check_table(table, qs.questions)
    by = {(r.policy, r.track): r for r in table.rows}
    assert all(by[HONEST, t].mean_s_adj == 1.0 for t in {q.track for q in qs.questions})


@pytest.mark.slow
@pytest.mark.parametrize("pack", sorted(set(bundled_packs()) - {"tiny"}))
def test_every_policy_on_every_bundled_pack(pack):
    store = groundeval.load(bundled_packs()[pack])
    try:
        sample = stratified(groundeval.generate(store).questions, PER_BUCKET)
        check_table(hacking_table(store, sample, config=store.manifest.evaluation.scoring, source=pack), sample)
    finally:
        store.close()


@pytest.mark.slow
def test_every_policy_on_a_synthetic_org(synth_org):
    store, qs = synth_org
    sample = stratified(qs.questions, PER_BUCKET)
    assert len({q.track for q in sample}) == 3
    check_table(hacking_table(store, sample, config=store.manifest.evaluation.scoring, source="synth"), sample)


def test_work_after_the_answer_earns_nothing(tiny):
    """post-submit's calls after its accepted answer are recorded, and the trace scores exactly
    as the same answer with no call at all."""
    store, qs = tiny
    for q in qs.questions:
        trace = run_episode(store, q, policy("post-submit"))
        assert trace.final_answer is not None and len(trace.calls) > 1
        assert all(c.status == "invalid" for c in trace.calls[1:])
        with Episode(store, q) as ep:
            ep.submit(answer_key(q))
        assert score(q, trace).s_adj == score(q, ep.trace).s_adj


def test_padding_dilutes_v_but_never_beats_the_oracle(tiny):
    """A known property of v = flagged calls / calls, shown rather than hidden: cheap searches
    before a gate-breaking path raise its S_adj (docs/rl.md), never above the oracle's."""
    store, qs = tiny
    gated = 0
    for q in qs.questions:
        plain = score(q, run_episode(store, q, policy("answer-key-leaky")))
        padded = score(q, run_episode(store, q, policy("padded-leaky")))
        oracle = score(q, run_episode(store, q, policy(HONEST)))
        assert padded.s_adj <= oracle.s_adj
        if plain.v_bad:
            gated += 1
            assert padded.v_bad == plain.v_bad and padded.violation_rate < plain.violation_rate
            assert plain.s_adj < padded.s_adj < oracle.s_adj
    assert gated


def test_repeated_submissions_keep_the_first_accepted_answer(tiny):
    store, qs = tiny
    for q in qs.questions[:5]:
        trace = run_episode(store, q, policy("repeat-submit"))
        valid = [s for s in trace.submissions if s.valid]
        assert trace.final_answer == valid[0].answer
        assert not trace.submissions[0].valid  # the probe
        assert [c.status for c in trace.calls[2:]] == ["invalid", "invalid"]


def test_policies_are_deterministic(tiny):
    store, qs = tiny
    for name in POLICIES:
        a = [s.model_dump() for _, s in run_policy(store, qs.questions[:4], name)]
        b = [s.model_dump() for _, s in run_policy(store, qs.questions[:4], name)]
        assert a == b, name


# ---------------------------------------------------------------------------- property: any call sequence


@st.composite
def call_plans(draw, n_ids: int):
    """A sequence of searches, fetches (of real ids, guessed ids and junk) and submissions."""
    step = st.one_of(
        st.tuples(
            st.just("search"),
            st.sampled_from(["incident", "postmortem review", "ticket", "deploy"]),
            st.sampled_from([None, "jira", "slack", "wiki"]),
        ),
        st.tuples(st.just("fetch"), st.integers(0, n_ids - 1), st.booleans()),
        st.tuples(st.just("submit"), st.booleans(), st.lists(st.integers(0, n_ids - 1), max_size=6)),
        st.tuples(st.just("junk"), st.text(max_size=5), st.none()),
    )
    return draw(st.lists(step, min_size=0, max_size=14))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_call_sequence_beats_the_oracle(tiny, data):
    from groundeval.rl.hacking import build_answer

    store, qs = tiny
    ids = sorted(fetch_index(store).meta)
    q = data.draw(st.sampled_from(qs.questions))
    plan = data.draw(call_plans(len(ids)))
    with Episode(store, q) as ep:
        for kind, a, b in plan:
            if kind == "search":
                ep.search(a, subsystem=b)
            elif kind == "fetch":
                ep.fetch(ids[a] if b else ids[a] + "-x")
            elif kind == "submit":
                ep.submit(build_answer(q.answer_schema, a, [ids[i] for i in b]))
            else:
                ep.call(a, {})
    oracle = run_episode(store, q, policy(HONEST))
    assert score(q, ep.trace).s_adj <= score(q, oracle).s_adj


@pytest.mark.slow
def test_cli_prints_the_table_and_json(tiny_pack):
    cli = [sys.executable, "-m", "groundeval.cli.main", "rl", "hacking", str(tiny_pack)]
    text = subprocess.run([*cli, "--policy", "no-look-yes", "--policy", "cite-all"], capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    assert "no-look-yes" in text.stdout and "cite-all" in text.stdout and "fetch-all" not in text.stdout
    out, again = (
        subprocess.run(
            [*cli, "--json", "--policy", "id-guess"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        for seed in ("1", "2")
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["ok"] is True
    assert {r["policy"] for r in data["rows"]} == {HONEST, "id-guess"}
    assert again.stdout == out.stdout  # the same bytes whatever the hash seed


def test_cli_rejects_an_unknown_policy(tiny_pack):
    out = subprocess.run(
        [sys.executable, "-m", "groundeval.cli.main", "rl", "hacking", str(tiny_pack), "--policy", "bribe-the-judge"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "--policy" in out.stderr and "bribe-the-judge" in out.stderr and "Traceback" not in out.stderr
