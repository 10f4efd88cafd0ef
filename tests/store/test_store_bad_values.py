"""Bad values that passed the verifier and crashed later (issue 31, item 6): infinite
timestamps, a file name that is not UTF-8, an agent name with a lone surrogate, Ctrl-C while a
pack loads. Each is a located error, lossless recording, or exit 130 without a traceback."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from groundeval.agents.runinfo import RunInfo, read_run_info, write_run_info
from groundeval.cli.main import main
from groundeval.errors import ContractError, interrupted
from groundeval.store.store import Store
from groundeval.trace.text import unescape
from groundeval.verifier import verify


def cli(capsys, *args):
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return (code, *capsys.readouterr())


@pytest.fixture()
def pack(tmp_path, tiny_pack):
    out = tmp_path / "pack"
    shutil.copytree(tiny_pack, out)
    return out


def _set_times(pack, event_times: dict[int, str], artifact_time: str | None = None):
    lines = (pack / "events.jsonl").read_text().splitlines()
    for i, ts in event_times.items():
        lines[i - 1] = json.dumps({**json.loads(lines[i - 1]), "timestamp": ts})
    (pack / "events.jsonl").write_text("\n".join(lines) + "\n")
    if artifact_time is not None:
        path = pack / "artifacts" / "jira" / "JIRA-43.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "timestamp": artifact_time}))


@pytest.mark.parametrize("text", ["infinity", "-infinity", "Infinity", " infinity"])
def test_an_infinite_timestamp_is_refused_by_verify_and_the_loader_located(pack, capsys, tmp_path, text):
    _set_times(pack, {3: text}, artifact_time=text)
    result = verify(pack, level=1)
    (event,) = result.by_rule("GE113")
    assert event.file.endswith("events.jsonl") and event.line == 3
    (artifact,) = result.by_rule("GE123")
    assert artifact.file.endswith("JIRA-43.json")
    with pytest.raises(ContractError) as caught:
        Store.open(pack)
    assert {(p.field, p.line) for p in caught.value.problems} == {("timestamp", 3), ("timestamp", None)}
    code, out, err = cli(capsys, "generate", str(pack), "--out", str(tmp_path / "q.json"))
    assert code == 2 and "events.jsonl:3" in err and "Traceback" not in err


def test_a_file_name_that_is_not_utf8_is_a_located_error(pack, capsys):
    name = os.path.join(os.fsencode(pack / "artifacts" / "jira"), b"\xffbad.json")
    with open(name, "wb") as fh:
        fh.write(b'{"title": "x", "timestamp": "2026-03-01T00:00:00Z", "body": "y"}')
    with pytest.raises(ContractError) as caught:
        Store.open(pack)
    (problem,) = caught.value.problems
    assert problem.file.endswith("jira/\\xffbad.json") and "not valid UTF-8" in problem.message
    assert [f.file for f in verify(pack, level=1).by_rule("GE125")] == [problem.file]
    code, out, err = cli(capsys, "info", str(pack))
    assert code == 2 and "\\xffbad.json" in err and "Traceback" not in err


def test_an_agent_name_with_a_lone_surrogate_is_recorded_escaped(tmp_path):
    """A name from argv bytes that are not UTF-8 (Python reads them as lone surrogates)."""
    name = "ollama:m\udcff"
    path = tmp_path / "run.json"
    write_run_info(path, RunInfo(agent={"name": name}, mode="tool", contract_digest="d" * 64))
    text = path.read_text(encoding="utf-8")
    assert unescape(json.loads(text)["agent"]["name"]) == name
    assert read_run_info(path) is not None


# ---------------------------------------------------------------------------- Ctrl-C


def test_an_interrupt_in_another_form_is_known_as_one():
    """DuckDB's client raises RuntimeError('Query interrupted') from the KeyboardInterrupt of a
    Ctrl-C during a query (what the CLI and the verifier must not take for an error)."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Query interrupted") from exc
    except RuntimeError as exc:
        assert interrupted(exc)
    assert not interrupted(RuntimeError("Query interrupted"))
    assert not interrupted(ContractError.single("x", "y"))


@pytest.mark.slow
def test_ctrl_c_while_a_pack_loads_exits_130_without_a_traceback(tmp_path):
    pack = tmp_path / "big"
    subprocess.run(
        [sys.executable, "-m", "groundeval.cli.main", "synth", "--events", "22500", str(pack)],
        check=True,
        capture_output=True,
    )
    codes = []
    for delay in (0.4, 0.8, 1.2, 1.6):
        proc = subprocess.Popen(
            [sys.executable, "-m", "groundeval.cli.main", "info", str(pack)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, err
        assert proc.returncode in (130, 0), (delay, proc.returncode, err)  # 0: it had finished
        codes.append(proc.returncode)
    assert 130 in codes
