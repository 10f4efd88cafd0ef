"""Issue 13, item 5: re-scoring verifies its input — one trace per (question, trial) (issue
31: whatever its agent or mode), the questions' contract digest (an all-zero one included),
the pack's digest with --pack, and bytes that are not UTF-8 are located errors (exit 2, no traceback)."""

from __future__ import annotations

import json

import pytest
from report_fixtures import write_run

from cli_run import cli

from groundeval.store.store import Store


@pytest.fixture()
def folder(tmp_path):
    return write_run(tmp_path / "run", good=True)


def test_a_duplicated_trace_line_is_refused_with_both_lines(folder, capsys, tmp_path):
    path = folder / "traces.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines) + lines[2], encoding="utf-8")
    code, out, err = cli(
        capsys, "score", str(path), "-q", str(folder / "questions.json"), "--out", str(tmp_path), "--bootstrap", "10"
    )
    assert code == 2 and f"{path}:{len(lines) + 1}" in err and "first is at line 3" in err
    assert "Traceback" not in err and not (tmp_path / "scores.jsonl").exists()


def test_the_same_question_by_another_agent_is_a_duplicate(folder, capsys, tmp_path):
    """One trace per (question, trial) of a run, whatever the agent (issue 31; more cases in
    test_report_rescore_keys.py)."""
    path = folder / "traces.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    other = json.loads(lines[0])
    other["agent"] = "another-agent"
    path.write_text("".join(lines) + json.dumps(other) + "\n", encoding="utf-8")
    code, out, err = cli(
        capsys, "score", str(path), "-q", str(folder / "questions.json"), "--out", str(tmp_path), "--bootstrap", "10"
    )
    assert code == 2 and f"{path}:{len(lines) + 1}" in err and "first is at line 1" in err


@pytest.mark.parametrize("digest", ["0" * 64, "e" * 64, ""])
def test_a_trace_of_another_contract_is_refused(folder, capsys, tmp_path, digest):
    path = folder / "traces.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = json.loads(lines[1])
    bad["contract_digest"] = digest
    lines[1] = json.dumps(bad) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    code, out, err = cli(capsys, "score", str(path), "-q", str(folder / "questions.json"), "--out", str(tmp_path))
    assert code == 2 and f"{path}:2" in err and "another contract" in err and "contract_digest" in err


def test_with_pack_the_questions_must_come_from_it(folder, capsys, tmp_path, tiny_pack):
    code, out, err = cli(
        capsys,
        "score",
        str(folder / "traces.jsonl"),
        "-q",
        str(folder / "questions.json"),
        "--pack",
        str(tiny_pack),
        "--out",
        str(tmp_path),
    )
    assert code == 2 and "another contract" in err and "metadata.contract_digest" in err
    # the same run recorded on the pack's real digest scores
    digest = Store.open(tiny_pack).digest
    for name in ("traces.jsonl", "questions.json"):
        p = folder / name
        p.write_text(p.read_text(encoding="utf-8").replace('"d"', json.dumps(digest)), encoding="utf-8")
    code, out, err = cli(
        capsys,
        "score",
        str(folder / "traces.jsonl"),
        "-q",
        str(folder / "questions.json"),
        "--pack",
        str(tiny_pack),
        "--out",
        str(tmp_path),
        "--bootstrap",
        "10",
    )
    assert code == 0, err


def test_invalid_utf8_in_traces_and_questions_is_located(folder, capsys, tmp_path):
    traces = folder / "traces.jsonl"
    assert cli(capsys, "score", str(traces), "-q", str(folder / "questions.json"), "--bootstrap", "10")[0] == 0
    data = traces.read_bytes().splitlines(keepends=True)
    traces.write_bytes(data[0] + data[1].replace(b'"perspective"', b'"persp\xff\xfective"') + b"".join(data[2:]))
    code, out, err = cli(capsys, "score", str(traces), "-q", str(folder / "questions.json"), "--out", str(tmp_path))
    assert code == 2 and f"{traces}:2" in err and "Traceback" not in err
    questions = folder / "questions.json"
    questions.write_bytes(questions.read_bytes().replace(b'"tiny"', b'"ti\xc3\x28ny"'))
    code, out, err = cli(capsys, "score", str(traces), "-q", str(questions), "--out", str(tmp_path))
    assert code == 2 and str(questions) in err and "Traceback" not in err
    questions.write_bytes(questions.read_bytes().replace(b'"ti\xc3\x28ny"', b'"tiny"'))
    code, out, err = cli(capsys, "report", str(folder), "--out", str(tmp_path), "--bootstrap", "10")
    assert code == 2 and f"{traces}:2" in err and "Traceback" not in err


@pytest.mark.slow
def test_unwritable_outputs_and_unreadable_inputs_exit_2_without_traceback(folder, capsys, tmp_path, tiny_pack):
    import shutil
    import subprocess
    import sys

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, out, err = cli(
        capsys,
        "score",
        str(folder / "traces.jsonl"),
        "-q",
        str(folder / "questions.json"),
        "--out",
        str(blocker / "out"),
        "--bootstrap",
        "10",
    )
    assert code == 2 and str(blocker) in err and "Traceback" not in err

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "groundeval.cli.main", *args], capture_output=True, text=True, timeout=300
        )

    done = run("generate", str(tiny_pack), "-o", str(blocker / "questions.json"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    pack = tmp_path / "pack"
    shutil.copytree(tiny_pack, pack)
    manifest = pack / "groundeval.yaml"
    original = manifest.read_bytes()
    manifest.write_bytes(b"# \xff\xfe\n" + original)
    done = run("info", str(pack))
    assert done.returncode == 2 and "UTF-8" in done.stderr and "Traceback" not in done.stderr
    manifest.write_bytes(original + b"\nextra: " + b"[" * 2000 + b"]" * 2000 + b"\n")
    done = run("info", str(pack))
    assert done.returncode == 2 and "Traceback" not in done.stderr


@pytest.mark.parametrize("batch", [4096, 2])  # the error before, or after, scores.jsonl's first batch is written
def test_a_refused_file_leaves_the_scores_and_the_folder_as_they_were(folder, capsys, tmp_path, monkeypatch, batch):
    """scores.jsonl is written while the traces are re-scored: a located error part way leaves
    no new folder, and an existing scores.jsonl unchanged."""
    from groundeval.scoring.io import ScoresWriter

    monkeypatch.setattr(ScoresWriter, "BATCH", batch)
    path = folder / "traces.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines) + lines[2], encoding="utf-8")
    fresh = tmp_path / "new" / "deeper"
    code, _out, err = cli(capsys, "score", str(path), "-q", str(folder / "questions.json"), "--out", str(fresh))
    assert code == 2 and "first is at line 3" in err and not (tmp_path / "new").exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "scores.jsonl").write_text("old\n")
    code, _out, err = cli(capsys, "score", str(path), "-q", str(folder / "questions.json"), "--out", str(kept))
    assert code == 2 and (kept / "scores.jsonl").read_text() == "old\n"
    assert sorted(p.name for p in kept.iterdir()) == ["scores.jsonl"]
