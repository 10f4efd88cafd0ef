"""Memory and input limits (issue 31, item 7): folder packs load under an address-space limit
(``ulimit -v 4000000``: DuckDB's JSON reader asked for 4 GiB), one JSONL line past the cap is
a located error found before any reader holds it whole, and a trace line likewise."""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groundeval.store.ingest as ingest
import groundeval.trace.io as trace_io
from groundeval.errors import ContractError
from groundeval.store.store import Store

LIMIT_KIB = 4_000_000  # what the containers and CI runners set


def _limited(limit_kib: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_kib * 1024, limit_kib * 1024))

    return apply


def run_limited(tmp_path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "groundeval.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
        preexec_fn=_limited(LIMIT_KIB),
    )


def test_info_on_a_folder_pack_works_under_an_address_space_limit(tmp_path):
    done = run_limited(tmp_path, "info", "tiny")
    assert done.returncode == 0, done.stderr
    assert "Out of Memory" not in done.stderr


@pytest.mark.slow
def test_eval_on_a_folder_pack_works_under_an_address_space_limit(tmp_path):
    done = run_limited(tmp_path, "eval", "tiny", "--agent", "oracle", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "scores.jsonl").is_file()


def test_duckdb_memory_limit_follows_the_address_space_limit():
    code = "from groundeval.store.store import duckdb_config; print(duckdb_config())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=_limited(LIMIT_KIB), check=True
    )
    assert f"'memory_limit': '{LIMIT_KIB * 1024 // 2 // (1024 * 1024)}MiB'" in done.stdout


# ---------------------------------------------------------------------------- one line's cap


@pytest.fixture()
def small_caps(monkeypatch):
    """A 4 KiB line cap read in 1 KiB chunks (the same rule as 64 MiB in 16 MiB chunks)."""
    monkeypatch.setattr(ingest, "_CHUNK", 1024)
    monkeypatch.setattr(ingest, "MAX_JSONL_LINE_BYTES", 4096)


@settings(max_examples=50, deadline=None)
@given(lengths=st.lists(st.integers(0, 9000), min_size=1, max_size=12), newline_at_end=st.booleans())
def test_the_first_line_past_the_cap_is_located(tmp_path_factory, lengths, newline_at_end):
    saved = ingest._CHUNK, ingest.MAX_JSONL_LINE_BYTES
    ingest._CHUNK, ingest.MAX_JSONL_LINE_BYTES = 1024, 4096
    try:
        path = tmp_path_factory.mktemp("lines") / "x.jsonl"
        path.write_bytes(b"\n".join(b"x" * n for n in lengths) + (b"\n" if newline_at_end else b""))
        too_long = [i for i, n in enumerate(lengths, 1) if n > 4096]
        if not too_long:
            count, _cr, _last = ingest._newline_count(path)
            assert count == len(lengths) - (0 if newline_at_end else 1)
            return
        with pytest.raises(ContractError) as caught:
            ingest._newline_count(path)
        (problem,) = caught.value.problems
        assert problem.line == too_long[0] and problem.file == str(path) and "4096 bytes" in problem.message
    finally:
        ingest._CHUNK, ingest.MAX_JSONL_LINE_BYTES = saved


def test_an_over_long_artifact_line_stops_the_load_located(small_caps, tmp_path, tiny_pack):
    pack = tmp_path / "pack"
    shutil.copytree(tiny_pack, pack)
    rows = [
        json.loads((f).read_text()) | {"id": f.stem, "subsystem": f.parent.name}
        for f in sorted(pack.glob("artifacts/*/*.json"))
    ]
    rows[1]["body"] = "word " * 2000
    shutil.rmtree(pack / "artifacts")
    (pack / "artifacts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = pack / "groundeval.yaml"
    manifest.write_text(manifest.read_text().replace("artifacts: artifacts ", "artifacts: artifacts.jsonl "))
    with pytest.raises(ContractError) as caught:
        Store.open(pack)
    (problem,) = caught.value.problems
    assert problem.file == str((pack / "artifacts.jsonl").resolve()) and problem.line == 2


def test_an_over_long_trace_line_is_refused_located(monkeypatch, tmp_path):
    monkeypatch.setattr(trace_io, "MAX_LINE_BYTES", 100)
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"{}\n" + b"x" * 5000 + b"\n{}\n")
    with pytest.raises(ContractError) as caught:
        list(trace_io.iter_trace_spans(path))
    assert caught.value.problems[0].line == 2
