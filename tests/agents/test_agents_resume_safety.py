"""Issue 13 in the runner: a resumed run never holds an episode twice, and a trace or
output folder that cannot be written stops the run with a located error — never a
silent loss or a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest

from agents_helpers import perspective_questions, write_question_set
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


def test_resume_refuses_a_duplicated_trace_line_with_its_location(store, tmp_path):
    qs = perspective_questions(3, store.digest)
    path = run_questions(store, perspective_questions(2, store.digest), OracleAgent(), out_dir=tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0] + lines[1] + lines[0], encoding="utf-8")
    with pytest.raises(ContractError) as err:
        recover_traces(path)
    problem = err.value.problems[0]
    assert problem.line == 3 and problem.record == "q000" and "first is at line 1" in problem.message
    with pytest.raises(ContractError, match="second trace"):
        run_questions(store, qs, OracleAgent(), out_dir=tmp_path, resume=True)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 3  # nothing appended


def test_cli_resume_with_a_duplicate_exits_2_without_traceback(store, tiny_pack, tmp_path):
    qs = perspective_questions(2, store.digest)
    qfile = tmp_path / "questions.json"
    write_question_set(qs, qfile)
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "groundeval.cli.main",
        "run",
        str(qfile),
        "--pack",
        str(tiny_pack),
        "--agent",
        "oracle",
        "--out",
        str(out),
        "--quiet",
    ]
    assert subprocess.run(cmd, capture_output=True, timeout=300).returncode == 0
    path = out / "traces.jsonl"
    first = path.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(first)
    done = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and f"{path}:3" in done.stderr and "Traceback" not in done.stderr


def test_an_unwritable_output_folder_is_a_located_error(store, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ContractError, match="cannot create the output folder"):
        run_questions(store, perspective_questions(1, store.digest), OracleAgent(), out_dir=blocker / "out")


class BreaksTheTracesFile(OracleAgent):
    """Replaces traces.jsonl by a folder while its second episode runs (a disk going away)."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.seen = 0

    def run(self, episode):
        self.seen += 1
        if self.seen == 2:
            deadline = time.monotonic() + 30
            while not self.path.read_bytes() and time.monotonic() < deadline:  # q000 is written first
                time.sleep(0.01)
            self.path.unlink()
            self.path.mkdir()
        super().run(episode)


def test_a_trace_that_cannot_be_written_stops_the_run_and_says_so(store, tmp_path):
    qs = perspective_questions(3, store.digest)
    agent = BreaksTheTracesFile(tmp_path / "traces.jsonl")
    with pytest.raises(ContractError) as err:
        run_questions(store, qs, agent, out_dir=tmp_path)
    assert "cannot write the trace of question 'q001'" in str(err.value) and "--resume" in str(err.value)
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["status"] == "aborted" and "q001" in info["sessions"][-1]["message"]
    # the disk comes back: --resume finishes with every question exactly once
    shutil.rmtree(tmp_path / "traces.jsonl")
    (tmp_path / "traces.jsonl").write_text("", encoding="utf-8")
    run_questions(store, qs, OracleAgent(), out_dir=tmp_path, resume=True)
    assert [t.question_id for t in read_traces(tmp_path / "traces.jsonl")] == ["q000", "q001", "q002"]
