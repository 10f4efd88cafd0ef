"""`groundeval eval` / `run` end to end, in-process: files, headline, determinism, errors."""

from __future__ import annotations

import json
import shutil

import pytest

from groundeval import api
from groundeval.agents.registry import get_agent
from groundeval.cli.main import main
from groundeval.errors import ContractError


def _cli(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_eval_quick_start_writes_every_file(tiny_pack, tmp_path, capsys):
    out = tmp_path / "tiny"
    assert _cli("eval", str(tiny_pack), "--agent", "oracle", "--out", str(out), "--quiet") == 0
    printed = capsys.readouterr().out
    for name in (
        "verification.json",
        "questions.json",
        "traces.jsonl",
        "run.json",
        "scores.jsonl",
        "report.json",
        "report.md",
        "report.html",
    ):
        assert (out / name).is_file(), name
    report = json.loads((out / "report.json").read_text())
    assert report["overall"]["means"]["s_adj"] == 1.0 and report["overall"]["run_violation_rate"] == 0.0
    n = report["overall"]["n"]
    assert (
        len((out / "scores.jsonl").read_text().splitlines())
        == n
        == len(json.loads((out / "questions.json").read_text())["questions"])
    )
    assert "perspective" in printed and "1.000" in printed and "report.html" in printed


def test_eval_is_deterministic_and_replaces_a_previous_run(tiny_pack, tmp_path):
    a = api.evaluate(tiny_pack, "lazy", tmp_path / "a")
    b = api.evaluate(tiny_pack, get_agent("lazy"), tmp_path / "b", concurrency=2)
    for name in ("questions.json", "scores.jsonl", "report.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    again = api.evaluate(tiny_pack, "lazy", tmp_path / "a")  # same folder: replaced, not appended
    assert len(again.traces) == len(a.traces) == len(b.traces)


def test_eval_refuses_a_pack_with_errors(tiny_pack, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(tiny_pack, broken)
    events = broken / "events.jsonl"
    events.write_text(events.read_text() + '{"id": "e99", "type": "x", "timestamp": "not a time"}\n')
    code = _cli("eval", str(broken), "--agent", "oracle", "--out", str(tmp_path / "o"), "--quiet")
    err = capsys.readouterr().err
    assert code == 2 and "events.jsonl" in err and "Traceback" not in err
    assert (tmp_path / "o" / "verification.json").is_file() and not (tmp_path / "o" / "traces.jsonl").exists()


def test_run_generates_saves_questions_and_resumes_them(tiny_pack, tmp_path, capsys):
    out = tmp_path / "r"
    assert _cli("run", str(tiny_pack), "--agent", "keyword", "--out", str(out), "--quiet") == 0
    assert "episodes" in capsys.readouterr().out
    saved = json.loads((out / "questions.json").read_text())
    assert _cli("run", str(tiny_pack), "--agent", "keyword", "--out", str(out), "--quiet") == 2  # no --resume
    assert _cli("run", str(tiny_pack), "--agent", "keyword", "--out", str(out), "--quiet", "--resume") == 0
    lines = (out / "traces.jsonl").read_text().splitlines()
    assert len(lines) == len(saved["questions"])
    info = json.loads((out / "run.json").read_text())
    assert info["sessions"][-1]["episodes"] == 0 and info["sessions"][-1]["skipped"] == len(lines)


def test_run_a_questions_file_against_its_pack(tiny_pack, tmp_path):
    first = tmp_path / "first"
    api.run(tiny_pack, "oracle", first)
    path = api.run(first / "questions.json", "oracle", tmp_path / "second", pack=tiny_pack, mode="context")
    lines = path.read_text().splitlines()
    assert lines and all(json.loads(line)["mode"] == "context" for line in lines)


@pytest.mark.parametrize(
    "spec,message",
    [
        ("nobody", "unknown agent"),
        ("openai:", "needs a model name"),
        ("no_such_module_xyz:make", "cannot import"),
        ("os:getcwd", "did not return an agent"),
        ("json:dumps", "cannot create agent"),
    ],
)
def test_bad_agent_specs_are_one_clear_error(spec, message):
    with pytest.raises(ContractError, match=message):
        get_agent(spec)


def test_user_agent_from_module_factory():
    agent = get_agent("agents_slow:make")
    assert agent.name == "slow-oracle" and callable(agent.run)
    llm = get_agent("openai:qwen2.5", base_url="http://127.0.0.1:1/v1", temperature=0.5, top_secret=None)
    assert llm.name == "openai:qwen2.5" and llm.settings()["temperature"] == 0.5


@pytest.mark.parametrize("seed", [None, 11])
def test_eval_questions_are_exactly_what_generate_writes(tiny_pack, tmp_path, seed):
    """The verifier's dry run hands its questions to the run: they must be generate(store)'s, byte for byte."""
    from groundeval.questions.generate import generate
    from groundeval.questions.io import write_questions
    from groundeval.store.store import Store

    api.evaluate(tiny_pack, "lazy", tmp_path / "e", seed=seed)
    store = Store.open(tiny_pack)
    try:
        write_questions(generate(store, seed=seed), tmp_path / "fresh.json")
        dry_run = generate(store)  # the verifier's dry run generates with the pack's own seed
    finally:
        store.close()
    assert (tmp_path / "e" / "questions.json").read_bytes() == (tmp_path / "fresh.json").read_bytes()
    verification = json.loads((tmp_path / "e" / "verification.json").read_text())
    assert verification["stats"]["generation"]["total"] == len(dry_run.questions)
