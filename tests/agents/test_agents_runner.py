"""The runner in-process: one trace per question, resume, torn tails, timeouts, errors."""

from __future__ import annotations

import json
import threading
import time

import pytest

from agents_helpers import perspective_questions
from groundeval.agents import runner
from groundeval.agents.http import ProviderError
from groundeval.agents.oracle import OracleAgent
from groundeval.agents.runner import recover_traces, run_questions
from groundeval.errors import ContractError
from groundeval.store.store import Store
from groundeval.trace.io import read_traces


@pytest.fixture(scope="module")
def store(tiny_pack):
    s = Store.open(tiny_pack)
    yield s
    s.close()


def _strip(trace):
    d = trace.model_dump(mode="json")
    d.pop("timings")
    return d


def test_run_writes_one_trace_per_question_in_order(store, tmp_path):
    qs = perspective_questions(6, store.digest)
    path = run_questions(store, qs, OracleAgent(), out_dir=tmp_path, concurrency=3)
    traces = read_traces(path)
    assert [t.question_id for t in traces] == [q.id for q in qs.questions]
    assert {t.status for t in traces} == {"completed"}
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["status"] == "completed" and info["episodes_done"] == 6 and info["by_status"] == {"completed": 6}
    assert info["agent"] == {"name": "oracle"} and info["contract_digest"] == store.digest
    assert info["settings"]["concurrency"] == 3 and info["versions"]["duckdb"]
    assert len(info["sessions"]) == 1 and info["sessions"][0]["episodes"] == 6


def test_concurrency_does_not_change_traces(store, tmp_path):
    qs = perspective_questions(5, store.digest)
    one = read_traces(run_questions(store, qs, OracleAgent(), out_dir=tmp_path / "a", concurrency=1))
    three = read_traces(run_questions(store, qs, OracleAgent(), out_dir=tmp_path / "b", concurrency=3))
    assert [_strip(t) for t in one] == [_strip(t) for t in three]


def test_existing_traces_need_resume_or_overwrite(store, tmp_path):
    qs = perspective_questions(2, store.digest)
    run_questions(store, qs, OracleAgent(), out_dir=tmp_path)
    with pytest.raises(ContractError, match="--resume"):
        run_questions(store, qs, OracleAgent(), out_dir=tmp_path)
    run_questions(store, qs, OracleAgent(), out_dir=tmp_path, overwrite=True)
    assert len(read_traces(tmp_path / "traces.jsonl")) == 2


def test_resume_cuts_a_torn_tail_and_runs_only_the_rest(store, tmp_path):
    qs = perspective_questions(5, store.digest)
    path = run_questions(store, perspective_questions(2, store.digest), OracleAgent(), out_dir=tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    with open(path, "a") as fh:  # a kill in the middle of the third write
        fh.write(lines[0][: len(lines[0]) // 2])
    calls = []

    class Counting(OracleAgent):
        def run(self, episode):
            calls.append(episode.question.id)
            super().run(episode)

    run_questions(store, qs, Counting(), out_dir=tmp_path, resume=True)
    traces = read_traces(path)
    assert calls == ["q002", "q003", "q004"]
    assert [t.question_id for t in traces] == [q.id for q in qs.questions]
    info = json.loads((tmp_path / "run.json").read_text())
    assert [s["episodes"] for s in info["sessions"]] == [2, 3] and info["sessions"][1]["skipped"] == 2


def test_recover_rejects_a_corrupt_line_in_the_middle(store, tmp_path):
    path = run_questions(store, perspective_questions(2, store.digest), OracleAgent(), out_dir=tmp_path)
    good = path.read_text().splitlines(keepends=True)
    path.write_text(good[0] + "{not json\n" + good[1])
    with pytest.raises(ContractError) as err:
        recover_traces(path)
    assert err.value.problems[0].line == 2


def test_resume_refuses_another_contract(store, tmp_path):
    qs = perspective_questions(1, store.digest)
    path = run_questions(store, qs, OracleAgent(), out_dir=tmp_path)
    path.write_text(path.read_text().replace(store.digest, "0" * 64))
    with pytest.raises(ContractError, match="another contract"):
        run_questions(store, qs, OracleAgent(), out_dir=tmp_path, resume=True)


def test_resume_refuses_another_agent(store, tmp_path):
    from groundeval.agents.baselines import LazyAgent

    qs = perspective_questions(2, store.digest)
    run_questions(store, qs, OracleAgent(), out_dir=tmp_path)
    with pytest.raises(ContractError, match="agent 'oracle'"):
        run_questions(store, qs, LazyAgent(), out_dir=tmp_path, resume=True)


class Raising:
    name = "raising"

    def run(self, episode):
        episode.search("checkout")
        raise RuntimeError("agent bug")


def test_agent_exception_is_an_error_trace_and_the_run_goes_on(store, tmp_path):
    path = run_questions(store, perspective_questions(2, store.digest), Raising(), out_dir=tmp_path)
    traces = read_traces(path)
    assert [t.status for t in traces] == ["error", "error"]
    assert "agent bug" in traces[0].messages[-1]["error"] and len(traces[0].calls) == 1


class SubmitsThenRaises(OracleAgent):
    name = "oracle"

    def run(self, episode):
        super().run(episode)
        raise RuntimeError("cleanup failed")


def test_an_accepted_answer_stands_when_the_agent_fails_afterwards(store, tmp_path):
    (trace,) = read_traces(
        run_questions(store, perspective_questions(1, store.digest), SubmitsThenRaises(), out_dir=tmp_path)
    )
    assert trace.status == "completed" and trace.final_answer is not None
    assert "cleanup failed" in trace.messages[-1]["error"]


class Sleepy:
    name = "sleepy"

    def __init__(self, pause: float, then_call: bool):
        self.pause, self.then_call = pause, then_call

    def run(self, episode):
        episode.search("checkout")
        time.sleep(self.pause)
        if self.then_call:
            episode.search("resolved")  # after the deadline: refused, the episode ends


def test_timeout_cooperative(store, tmp_path):
    path = run_questions(
        store, perspective_questions(1, store.digest), Sleepy(0.4, True), out_dir=tmp_path, timeout=0.2
    )
    (trace,) = read_traces(path)
    assert trace.status == "timeout" and len(trace.calls) == 1


class Stuck:
    """Searches once, then blocks until the test lets it go (an agent that never returns)."""

    name = "stuck"

    def __init__(self):
        self.release, self.finished = threading.Event(), threading.Event()

    def run(self, episode):
        episode.search("checkout")
        self.release.wait(600)
        self.finished.set()


def test_timeout_abandons_an_agent_that_never_returns(store, tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "GRACE_S", 0.1)
    agent = Stuck()
    try:
        path = run_questions(store, perspective_questions(1, store.digest), agent, out_dir=tmp_path, timeout=0.2)
        # the run ended while the agent is still blocked: it was abandoned, not waited for
        # (what is checked is that, not a number of seconds, which a loaded machine stretches)
        assert not agent.finished.is_set()
    finally:
        agent.release.set()
    (trace,) = read_traces(path)
    assert trace.status == "timeout" and [c.tool for c in trace.calls] == ["search_artifacts"]


class Fatal:
    name = "fatal"

    def run(self, episode):
        raise ProviderError("HTTP 401: bad key", status=401, fatal=True)


def test_fatal_provider_error_aborts_the_run(store, tmp_path):
    with pytest.raises(ContractError, match="bad key"):
        run_questions(store, perspective_questions(3, store.digest), Fatal(), out_dir=tmp_path)
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "aborted"
    assert read_traces(tmp_path / "traces.jsonl") == []


def test_recover_any_kill_point(store, tmp_path_factory):
    """Wherever a kill cuts the file, recovery keeps exactly the whole traces before the cut
    and leaves a file that later appends extend cleanly."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from groundeval.trace.io import append_trace

    src = run_questions(
        store, perspective_questions(3, store.digest), OracleAgent(), out_dir=tmp_path_factory.mktemp("src")
    )
    data = src.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    extra = read_traces(src)[0].model_copy(update={"question_id": "q-extra"})  # one trace per question
    work = tmp_path_factory.mktemp("cut") / "traces.jsonl"

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.integers(0, len(data)))
    def check(cut):
        work.write_bytes(data[:cut])
        kept = recover_traces(work)
        whole = sum(1 for e in ends if e <= cut) + (1 if cut in [e - 1 for e in ends] else 0)
        assert len(kept) == whole
        append_trace(work, extra)
        assert len(read_traces(work)) == whole + 1

    check()
