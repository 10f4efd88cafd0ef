"""Issue 13: a bounded fuzz suite — whatever bytes a traces or questions file holds and
whatever an agent sends, no traceback: ``score`` exits 0 or 2 with a location, and
every call an agent makes within its budget is in the trace, which always writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scoring"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))

from report_fixtures import write_run  # noqa: E402
from runtime_questions import at, make_question  # noqa: E402

from groundeval.cli.main import main  # noqa: E402
from groundeval.runtime.episode import Episode  # noqa: E402
from groundeval.store.store import Store  # noqa: E402
from groundeval.trace.io import append_trace, read_traces, trace_line  # noqa: E402

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("fuzz-run"), good=True)


@pytest.fixture(scope="module")
def store(tiny_pack):
    s = Store.open(tiny_pack)
    s.ensure_fts()
    yield s
    s.close()


def _score(capsys, traces: Path, questions: Path, out: Path) -> tuple[int, str]:
    try:
        main(["score", str(traces), "-q", str(questions), "--out", str(out), "--bootstrap", "5"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("cut"), st.integers(0, 10**6), st.integers(1, 200)),
    st.tuples(st.just("dup"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("deep"), st.integers(0, 10**6), st.integers(100, 3000)),
)


def _mutate(data: bytes, muts) -> bytes:
    for kind, pos, arg in muts:
        pos = pos % (len(data) + 1)
        if kind == "flip" and data:
            pos = min(pos, len(data) - 1)
            data = data[:pos] + bytes([arg]) + data[pos + 1 :]
        elif kind == "insert":
            data = data[:pos] + arg + data[pos:]
        elif kind == "cut":
            data = data[:pos] + data[pos + arg :]
        elif kind == "dup":
            lines = data.splitlines(keepends=True)
            if lines:
                data = data + lines[pos % len(lines)]
        elif kind == "deep":
            data = data[:pos] + b"[" * arg + b"]" * arg + data[pos:]
    return data


@FUZZ
@given(muts=st.lists(mutation, min_size=1, max_size=4))
def test_fuzzed_traces_files_never_traceback(run_dir, tmp_path_factory, capsys, muts):
    work = tmp_path_factory.mktemp("t")
    traces = work / "traces.jsonl"
    traces.write_bytes(_mutate((run_dir / "traces.jsonl").read_bytes(), muts))
    code, err = _score(capsys, traces, run_dir / "questions.json", work)
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("error: ") and str(traces) in err and "Traceback" not in err


@FUZZ
@given(muts=st.lists(mutation, min_size=1, max_size=4))
def test_fuzzed_questions_files_never_traceback(run_dir, tmp_path_factory, capsys, muts):
    work = tmp_path_factory.mktemp("q")
    questions = work / "questions.json"
    questions.write_bytes(_mutate((run_dir / "questions.json").read_bytes(), muts))
    code, err = _score(capsys, run_dir / "traces.jsonl", questions, work)
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("error: ") and "Traceback" not in err
        assert str(questions) in err or str(run_dir / "traces.jsonl") in err


text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xFFFF), max_size=40)
json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
tool = st.sampled_from(["search_artifacts", "fetch_artifact", "submit_answer", "teleport"]) | text | json_like
arguments = st.one_of(
    st.fixed_dictionaries({"query": text}, optional={"subsystem": json_like, "limit": json_like}),
    st.fixed_dictionaries({"artifact_id": text | json_like}),
    st.fixed_dictionaries({"answer": json_like}),
    json_like,
)


@FUZZ
@given(calls=st.lists(st.tuples(tool, arguments), min_size=1, max_size=12), deep=st.integers(0, 2500))
def test_fuzzed_tool_calls_are_all_recorded_and_the_trace_writes(store, tmp_path_factory, calls, deep):
    nested: object = "x"
    for _ in range(deep):
        nested = {"a": nested} if deep % 2 else [nested]
    calls = calls + [("submit_answer", {"answer": nested})]
    q = make_question(actor="alice", as_of=at(9))
    with Episode(store, q, max_steps=100) as ep:
        for name, args in calls:
            reply = ep.call(name, args)
            assert isinstance(reply, dict) and reply["status"] in ("ok", "not_found", "invalid", "error")
            assert reply["status"] != "error", reply
    assert len(ep.trace.calls) == len(calls)  # no call missing
    line = trace_line(ep.trace)
    line.encode("utf-8")
    path = tmp_path_factory.mktemp("tr") / "traces.jsonl"
    append_trace(path, ep.trace)
    (back,) = read_traces(path)
    assert trace_line(back) == line
    json.loads(line)
