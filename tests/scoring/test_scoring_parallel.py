"""Re-scoring by helper processes yields what one process yields: the same scores (values and
canonical lines), the same kept trace fields, the same lines in file order — and, for a bad
file, the same located error (bad JSON, another contract, a repeated trace key, the first
problem in file order winning)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_scoring_properties import QUESTIONS, calls
from test_scoring_struct_path import kept

from groundeval.errors import ContractError
from groundeval.scoring import parallel
from groundeval.scoring.io import TraceRef, iter_rescore_lines, score_line
from groundeval.trace import io as trace_io
from groundeval.trace.io import trace_line
from groundeval.trace.model import Trace

QMAP = {q.id: q for q in QUESTIONS}
KEPT = TraceRef._KEPT


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(parallel, "CHUNK", 3)  # many chunks, every helper used several times


@st.composite
def trace_lines(draw) -> list[str]:
    """Traces of known and unknown questions, each under its own agent and trial (one trace per key)."""
    out = []
    for i in range(draw(st.integers(1, 14))):
        q = draw(st.sampled_from(QUESTIONS))
        qid = q.id if draw(st.integers(0, 5)) else "not-a-question"
        t = Trace(
            question_id=qid,
            track=q.track,
            mode=draw(st.sampled_from(["tool", "context"])),
            actor=q.actor,
            as_of=q.as_of,
            contract_digest="d" * 64,
            agent=f"a{i}",
            trial=i * 3 + draw(st.integers(0, 2)),  # one trace per (question, trial)
            calls=[{**c, "index": k} for k, c in enumerate(draw(st.lists(calls(), max_size=4)))],
            usage=draw(st.dictionaries(st.sampled_from(["input", "output"]), st.integers(0, 99))),
            timings={"total_ms": draw(st.none() | st.floats(0, 1e4)), "call_latency_ms": [1.5]},
        )
        out.append(trace_line(t))
    return out


def _run(path, workers: int, digest: str | None = "d" * 64):
    try:
        return [
            (tuple(kept(t, f) for f in KEPT), None if s is None else score_line(s), s, line)
            for t, s, line in iter_rescore_lines(path, QMAP, contract_digest=digest, workers=workers)
        ]
    except ContractError as exc:
        return ("error", str(exc))


def _write(tmp_path, lines: list[str]):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.mark.slow
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)  # tmp_path reused
@given(
    trace_lines(),
    st.integers(1, 3),
    st.sampled_from(["none", "json", "digest", "duplicate", "field", "long"]),
    st.integers(0, 20),
    st.sampled_from([None, True, False]),
)
def test_helpers_yield_what_one_process_yields(tmp_path, lines, workers, damage, where, ready):
    """``ready``: whether a helper's answer counts as arrived — False: this process scores
    every chunk it can while the one due is with its helper; True: it always waits."""
    lines = list(lines)
    at = where % (len(lines) + 1)
    if damage == "json":
        lines.insert(at, '{"question_id": "p1", oops')
    elif damage == "digest":
        lines.insert(at, lines[at % len(lines)].replace('"' + "d" * 64 + '"', '"' + "0" * 64 + '"'))
    elif damage == "duplicate":
        lines.insert(at, lines[at % len(lines)])
    elif damage == "field":
        rec = json.loads(lines[at % len(lines)])
        rec["calls"] = [{"index": "x"}]
        lines.insert(at, json.dumps(rec))
    longest = max(map(len, lines))
    if damage == "long":  # a line longer than the reader takes (below): its error raised in its turn
        lines.insert(at, max(lines, key=len) + " " * 64)
    path = _write(tmp_path, lines)
    saved = parallel._Helper.ready, trace_io.MAX_LINE_BYTES
    trace_io.MAX_LINE_BYTES = longest + 33
    try:
        alone = _run(path, 0)
        if ready is not None:
            parallel._Helper.ready = lambda self: ready
        assert _run(path, workers) == alone
    finally:
        parallel._Helper.ready, trace_io.MAX_LINE_BYTES = saved
    if damage != "none":
        assert alone[0] == "error"


def _agents_lines(agents: int, **fields) -> list[str]:
    """A trace line per question for each of ``agents`` agent names (``fields`` added to each)."""
    return [
        trace_line(
            Trace(
                question_id=q.id,
                track=q.track,
                mode="tool",
                actor=q.actor,
                as_of=q.as_of,
                contract_digest="d" * 64,
                agent=f"a{i}",
                trial=i,  # one trace per (question, trial)
                **fields,
            )
        )
        for i in range(agents)
        for q in QUESTIONS
    ]


def test_a_large_file_uses_helpers_and_keeps_every_field(tmp_path, monkeypatch):
    lines = _agents_lines(40, timings={"started": "2026-01-01T00:00:00Z", "total_ms": 2.5})
    path = _write(tmp_path, lines)
    monkeypatch.setattr(parallel, "MIN_BYTES", 1)
    monkeypatch.delenv("GROUNDEVAL_SCORE_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    assert parallel.workers_wanted(path) == 1  # two cores, one idle: a helper, and this process
    monkeypatch.setattr(os, "getloadavg", lambda: (1.5, 0.2, 0.2))
    assert parallel.workers_wanted(path) == 0  # no idle core: helpers would only add their costs
    monkeypatch.setenv("GROUNDEVAL_SCORE_WORKERS", "3")
    assert parallel.workers_wanted(path) == 3
    helped = list(iter_rescore_lines(path, QMAP, workers=2))
    alone = list(iter_rescore_lines(path, QMAP, workers=0))
    assert all(isinstance(t, TraceRef) and type(t._line) is tuple for t, _s, _l in helped)
    for (h, s1, l1), (t, s2, l2) in zip(helped, alone, strict=True):
        assert l1 == l2 and s1 == s2 and score_line(s1) == score_line(s2)
        assert s1.__pydantic_fields_set__ == s2.__pydantic_fields_set__
        assert all(kept(h, f) == kept(t, f) for f in KEPT)
        ref = TraceRef(h, l1)  # the drill-down still reaches every field of the trace
        assert ref.calls == t.calls and ref.submissions == t.submissions


def test_a_helper_whose_answer_is_not_read_is_not_waited_for():
    """An error part way ends re-scoring while a helper still holds a chunk: its answer (more
    than a pipe holds) is never read, so closing it must stop it, not wait 5 s and kill it."""
    import signal

    q = QUESTIONS[0]
    line = trace_line(
        Trace(question_id=q.id, track=q.track, mode="tool", actor=q.actor, as_of=q.as_of, contract_digest="d" * 64)
    ).encode()
    h = parallel._Helper()
    h.send(("traces.jsonl", QMAP, None, None, None))
    h.send([(n, line) for n in range(1, 2001)])  # ~1 MB of answer
    h.close()
    # it ended by itself on the closed pipe, not killed after close's grace period (a bound on
    # seconds would flake on a loaded machine; the kill is what waiting for it ends with)
    assert h.proc.returncode is not None and h.proc.returncode != -signal.SIGKILL


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_helper_that_dies_part_way_changes_nothing(tmp_path, monkeypatch, when):
    """The helper is killed before, or after, its second chunk is sent: that chunk and every
    later one are scored here, and the results are one process's, in file order."""
    lines = _agents_lines(6)
    path = _write(tmp_path, lines)
    alone = _run(path, 0)
    chunks = []
    send = parallel._Helper.send

    def dying(self, message):
        chunks.append(message)
        if len(chunks) == 3 and when == "before":  # the setup, then the chunks
            self.proc.kill()
            self.proc.wait()
        send(self, message)
        if len(chunks) == 3 and when == "after":
            self.proc.kill()
            self.proc.wait()

    monkeypatch.setattr(parallel._Helper, "send", dying)
    monkeypatch.setattr(parallel._Helper, "ready", lambda self: True)  # every chunk waits for the helper
    assert _run(path, 1) == alone
    assert len(chunks) == 3  # no chunk went to the dead helper
