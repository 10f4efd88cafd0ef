"""The backend layer without Ray: the local backend is the default and changes nothing, a
missing Ray is a one-line usage error, and the Ray-free worker code (read-only store from a
prepared DuckDB file, chunked scoring merged in line order) gives what the local path gives.
The Ray backend itself is tested in tests/extras/ray."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval import api
from groundeval.agents.registry import get_agent
from groundeval.agents.runner import run_episode
from groundeval.distributed import LocalBackend, get_backend, pairs_in_order
from groundeval.distributed.worker import (
    AgentSpec,
    EpisodeWorker,
    ScoreWorker,
    StoreSpec,
    line_chunks,
    merge_lines,
    prepare_store_file,
)
from groundeval.errors import ContractError, UsageError
from groundeval.scoring.io import iter_rescore_lines, score_line
from groundeval.store.store import Store
from groundeval.trace.io import trace_line

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "domain_packs" / "tiny"


def _no_timings(line: str) -> dict:
    d = json.loads(line)
    d.pop("timings")
    return d


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """Questions and the traces of two agents on tiny (one file, so it has keyword's searches too)."""
    out = tmp_path_factory.mktemp("run")
    store = Store.open(TINY)
    try:
        qs = api.generate(store)
        traces = [run_episode(store, q, get_agent(a), mode="tool") for a in ("oracle", "keyword") for q in qs.questions]
        for t in traces[len(qs.questions) :]:
            t.trial = 1  # one trace per (question, trial) in a file: keyword's are the second trial
    finally:
        store.close()
    path = out / "traces.jsonl"
    path.write_text("".join(trace_line(t) + "\n" for t in traces), encoding="utf-8")
    return qs, traces, path


def test_importing_the_backends_does_not_import_ray():
    code = "import sys, groundeval.distributed, groundeval.api; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_get_backend_names():
    assert isinstance(get_backend(None), LocalBackend)
    assert isinstance(get_backend("local"), LocalBackend)
    mine = LocalBackend()
    assert get_backend(mine) is mine
    with pytest.raises(UsageError, match="unknown backend 'spark'"):
        get_backend("spark")
    with pytest.raises(UsageError, match="expected a backend name"):
        get_backend(3)  # type: ignore[arg-type]


_WITHOUT_RAY = (
    "import sys; sys.modules['ray'] = None\nfrom groundeval.cli.main import main\nsys.argv[0] = 'groundeval'\nmain()"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "tiny", "--agent", "oracle", "--out", "{out}", "--backend", "ray"],
        ["eval", "tiny", "--agent", "oracle", "--out", "{out}", "--backend", "ray"],
        ["score", "{out}/t.jsonl", "--questions", "{out}/q.json", "--backend", "ray"],
    ],
)
def test_ray_missing_is_one_line_naming_the_extra_exit_2(tmp_path, argv):
    """As if Ray were not installed (whether or not it is here): the install command, exit 2, no traceback."""
    argv = [a.format(out=tmp_path) for a in argv]
    (tmp_path / "t.jsonl").write_text("")
    (tmp_path / "q.json").write_text(json.dumps({"metadata": {}, "questions": []}))
    proc = subprocess.run(
        [sys.executable, "-c", _WITHOUT_RAY, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "RAY_ADDRESS": ""},
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "pip install 'groundeval[ray]'" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "traces.jsonl").exists()


def test_api_ray_missing_raises_usage_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(UsageError, match=r"pip install 'groundeval\[ray\]'"):
        api.run("tiny", "oracle", tmp_path, backend="ray")


def test_ray_options_need_the_ray_backend(tmp_path):
    from groundeval.cli.options import make_backend

    with pytest.raises(UsageError, match="--workers.*needs --backend ray"):
        make_backend("local", None, 2, None)
    with pytest.raises(UsageError, match="--ray-address"):
        make_backend("local", "ray://x:10001", None, None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundeval.cli.main",
            "run",
            "tiny",
            "--agent",
            "oracle",
            "--out",
            str(tmp_path),
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "needs --backend ray" in proc.stderr


def test_local_backend_scores_like_score_run(tiny_run):
    qs, traces, _path = tiny_run
    shuffled = list(reversed(traces))
    want = [score_line(s) for s in api.score_run(qs, shuffled)]
    assert [score_line(s) for s in LocalBackend().score(qs, shuffled)] == want
    assert [score_line(s) for s in api.score(qs, shuffled, backend="local")] == want
    order = [(q.id, t.trial) for q, t in pairs_in_order(qs, shuffled)]
    assert order == sorted(order, key=lambda k: [q.id for q in qs.questions].index(k[0]))


def test_run_with_db_file_gives_the_same_traces(tmp_path):
    """--db keeps the store in a file (reused); the traces are those of the in-memory store."""
    a = api.run("tiny", "keyword", tmp_path / "a")
    b = api.run("tiny", "keyword", tmp_path / "b", db=tmp_path / "tiny.duckdb")
    c = api.run("tiny", "keyword", tmp_path / "c", db=tmp_path / "tiny.duckdb")  # reused file
    lines = [[_no_timings(x) for x in p.read_text().splitlines()] for p in (a, b, c)]
    assert lines[0] == lines[1] == lines[2] and lines[0]


def test_episode_worker_on_a_prepared_read_only_file_matches_the_local_store(tmp_path):
    """What every Ray worker does: open the prepared file read-only (BM25 and search tables
    built in) and run episodes — the same traces as on the in-memory store."""
    db = tmp_path / "tiny.duckdb"
    digest = prepare_store_file(Store.open(TINY, db=db))
    local = Store.open(TINY)
    try:
        qs = api.generate(local)
        for agent in ("keyword", "oracle"):
            worker = EpisodeWorker(StoreSpec(str(db), digest), AgentSpec(name=agent))
            assert worker.ready()
            for q in qs.questions:
                got = worker.run(q, mode="tool", max_steps=30, timeout=None, trial=0, seed=None)
                want = run_episode(local, q, get_agent(agent), mode="tool")
                assert _no_timings(trace_line(got)) == _no_timings(trace_line(want))
            worker.store.close()
    finally:
        local.close()
    # the file opens read-only in several processes at once
    code = f"from groundeval.store.store import Store; print(Store.open_db({str(db)!r}).digest)"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    assert [p.communicate()[0].strip() for p in procs] == [digest, digest]


def test_worker_setup_errors_are_located_and_kept_for_ready(tmp_path):
    db = tmp_path / "tiny.duckdb"
    digest = prepare_store_file(Store.open(TINY, db=db))
    missing = EpisodeWorker(StoreSpec(str(tmp_path / "nope.duckdb"), digest), AgentSpec(name="oracle"))
    with pytest.raises(ContractError, match="no such store file on worker .* shared storage|every node mounts"):
        missing.ready()
    other = EpisodeWorker(StoreSpec(str(db), "0" * 64), AgentSpec(name="oracle"))
    with pytest.raises(ContractError, match=f"holds contract {digest[:12]}.*the run's is 000000000000"):
        other.ready()
    with pytest.raises(ContractError, match=f"holds contract {digest[:12]}"):
        other.run(None, mode="tool", max_steps=1, timeout=None, trial=0, seed=None)
    unknown = EpisodeWorker(StoreSpec(str(db), digest), AgentSpec(name="no_such_module_xyz:make"))
    with pytest.raises(UsageError, match="cannot import 'no_such_module_xyz'"):
        unknown.ready()


def test_agent_spec_by_name_and_pickled():
    assert AgentSpec(name="oracle").build().name == "oracle"
    agent = get_agent("keyword")
    rebuilt = AgentSpec(pickled=pickle.dumps(agent)).build()
    assert type(rebuilt) is type(agent) and rebuilt.name == agent.name


# --------------------------------------------------------------------------- chunked scoring


def _stream(items):
    return [(h.question_id, h.trial, None if s is None else score_line(s), line) for h, s, line in items]


def _local(path, qmap, digest):
    return iter_rescore_lines(path, qmap, contract_digest=digest)


def _chunked(path, qmap, digest, size):
    from groundeval.trace.io import iter_trace_lines

    worker = ScoreWorker(qmap, None, None, digest, str(path))
    return merge_lines(path, ((c, worker.score_lines(c)) for c in line_chunks(iter_trace_lines(path), size)))


def _outcome(make):
    got = []
    try:
        for item in make():
            got.append(item)
    except ContractError as exc:
        return _stream(got), str(exc)
    return _stream(got), None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    size=st.integers(1, 50),
    damage=st.sampled_from(["none", "garbage", "repeat", "digest", "unknown", "blank"]),
    at=st.integers(0, 41),
)
def test_chunked_scoring_merges_to_the_sequential_stream(tmp_path_factory, tiny_run, size, damage, at):
    """Any chunking, any damage: the same (trace, score, line) stream and the same first error."""
    qs, traces, _ = tiny_run
    lines = [trace_line(t) for t in traces]
    at = at % len(lines)
    if damage == "garbage":
        lines.insert(at, '{"not": "a trace"')
    elif damage == "repeat":
        lines.insert(at, lines[(at + 7) % len(lines)])
    elif damage == "digest":
        lines[at] = lines[at].replace(qs.metadata.contract_digest, "f" * 64)
    elif damage == "unknown":
        lines[at] = lines[at].replace(traces[at].question_id, "no-such-question")
    elif damage == "blank":
        lines.insert(at, "   ")
    path = tmp_path_factory.mktemp("chunks") / "traces.jsonl"
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    qmap = {q.id: q for q in qs.questions}
    digest = qs.metadata.contract_digest
    want = _outcome(lambda: _local(path, qmap, digest))
    got = _outcome(lambda: _chunked(path, qmap, digest, size))
    assert got == want
    if damage in ("garbage", "repeat", "digest"):
        assert want[1] is not None and f"{path}:" in want[1]
    else:
        assert want[1] is None and len(want[0]) == len(traces)


def test_line_chunks_keep_order_and_sizes():
    lines = [(n, b"x" * n) for n in range(1, 30)]
    chunks = list(line_chunks(iter(lines), 4))
    assert [x for c in chunks for x in c] == lines
    assert all(len(c) == 4 for c in chunks[:-1]) and 1 <= len(chunks[-1]) <= 4
    assert list(line_chunks(iter([]), 3)) == []
