"""An audit of failure paths: nothing reports success on a run that broke or measured nothing,
and bad input is a located error (exit 2), never a pass. Each test drives the real CLI on the
bundled packs and files written the way a user (or an adversary) would write them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_run import cli

from groundeval.cli.main import main


def _run(*args: str) -> None:
    try:
        main(list(args))
    except SystemExit as exc:
        assert not exc.code, f"groundeval {' '.join(args)} exited {exc.code}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An oracle eval of tiny (every question answered), the same traces scored in part (two of
    21 traces) and not at all (an empty traces file), and an oracle eval of another pack."""
    root = tmp_path_factory.mktemp("audit")
    _run("eval", "tiny", "--agent", "oracle", "--out", str(root / "base"), "-q")
    _run("eval", "legal", "--agent", "oracle", "--out", str(root / "other"), "-q", "--limit", "3")
    questions = str(root / "base" / "questions.json")
    lines = (root / "base" / "traces.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (root / "two.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    (root / "none.jsonl").write_text("", encoding="utf-8")
    try:
        main(["score", str(root / "two.jsonl"), "--questions", questions, "--out", str(root / "part")])
    except SystemExit:
        pass
    return root


@pytest.mark.parametrize("target", ["folder", "scores.jsonl", "report.json"])
def test_gate_fails_a_run_scored_from_a_partial_traces_file(runs, target, capsys):
    path = runs / "part" if target == "folder" else runs / "part" / target
    code, out, _ = cli(capsys, "gate", str(path), "--min-adjusted", "0.9")
    assert code == 1 and "gate passed" not in out
    assert "FAIL  run.missing_questions: 19 questions of the run's set have no trace" in out
    code, out, _ = cli(capsys, "gate", str(path), "--min-adjusted", "0.9", "--allow-errors")
    assert code == 0 and "(allowed by --allow-errors)" in out


def test_gate_fails_a_run_with_no_score_whatever_is_allowed(runs, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "scores.jsonl").write_text("", encoding="utf-8")
    code, out, _ = cli(capsys, "gate", str(empty), "--min-adjusted", "0", "--allow-errors", "--allow-empty")
    assert code == 1 and "gate passed" not in out
    assert "FAIL  run.scores: the run holds no score: nothing was measured" in out


def test_gate_fails_a_baseline_with_no_question_in_common(runs, capsys):
    code, out, _ = cli(capsys, "gate", str(runs / "base"), "--baseline", str(runs / "other"), "--max-drop", "0.02")
    assert code == 1 and "gate passed" not in out
    assert "FAIL  overall.max_drop: no question in common with the baseline" in out
    assert "over 0 paired questions" not in out
    # the same baseline as itself still passes: the check is about pairs, not about the figures
    code, out, _ = cli(capsys, "gate", str(runs / "base"), "--baseline", str(runs / "base"), "--max-drop", "0")
    assert code == 0 and "over 21 paired questions" in out


def test_a_clean_run_gets_no_integrity_line(runs, capsys):
    code, out, _ = cli(capsys, "gate", str(runs / "base"), "--min-adjusted", "0.9")
    assert code == 0 and "run." not in out
    report = json.loads((runs / "base" / "report.json").read_text(encoding="utf-8"))
    assert report["missing_question_ids"] == [] and report["overall"]["n"] == 21


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_score_refuses_a_traces_file_with_no_trace(runs, tmp_path, content, capsys):
    traces = tmp_path / "traces.jsonl"
    traces.write_text(content, encoding="utf-8")
    out_dir = tmp_path / "out"
    code, out, err = cli(
        capsys, "score", str(traces), "--questions", str(runs / "base" / "questions.json"), "--out", str(out_dir)
    )
    assert code == 2 and "scored" not in out and "Traceback" not in err
    assert f"error: {traces}: holds no trace: nothing to score" in err
    assert not out_dir.exists()  # no scores.jsonl of nothing for a gate to read


def test_score_refuses_traces_that_answer_no_question_of_the_set(runs, tmp_path, capsys):
    doc = json.loads((runs / "base" / "questions.json").read_text(encoding="utf-8"))
    for q in doc["questions"]:
        q["id"] = "x" + q["id"][1:]  # same contract, another question set
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(doc), encoding="utf-8")
    traces = runs / "base" / "traces.jsonl"
    code, out, err = cli(capsys, "score", str(traces), "--questions", str(questions), "--out", str(tmp_path / "o"))
    assert code == 2 and "scored" not in out
    assert f"none of its 21 traces answers a question of {questions}: nothing to score" in err


def test_score_warns_when_every_episode_errored(runs, tmp_path, capsys):
    broken = []
    for line in (runs / "base" / "traces.jsonl").read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        t.update(status="error", calls=[], submissions=[], final_answer=None)
        broken.append(json.dumps(t))
    traces = tmp_path / "traces.jsonl"
    traces.write_text("\n".join(broken) + "\n", encoding="utf-8")
    q = str(runs / "base" / "questions.json")
    code, out, err = cli(capsys, "score", str(traces), "--questions", q, "--out", str(tmp_path / "o"))
    assert code == 0 and "scored 21 traces" in out  # the scores are right: 0 each
    assert "warning: 21 of 21 episodes errored (the agent raised or timed out); each scores 0" in err


@pytest.mark.parametrize(("field", "value"), [("s_adj", "NaN"), ("s_answer", "Infinity"), ("penalty", "-Infinity")])
def test_a_score_that_is_not_a_finite_number_is_a_located_error(runs, tmp_path, field, value, capsys):
    lines = (runs / "base" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[1])
    first[field] = 0.5
    lines[1] = json.dumps(first).replace(f'"{field}": 0.5', f'"{field}": {value}')
    bad = tmp_path / "run"
    bad.mkdir()
    (bad / "scores.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (("gate", str(bad), "--min-adjusted", "0.5"), ("compare", str(runs / "base"), str(bad))):
        code, out, err = cli(capsys, *args)
        assert code == 2 and "passed" not in out and "Traceback" not in err
        assert f"error: {bad / 'scores.jsonl'}:2 field '{field}': not a finite number" in err
    code, out, _ = cli(capsys, "gate", str(bad), "--baseline", str(runs / "base"), "--max-drop", "0.1")
    assert code == 2 and "within allowed drop" not in out


def test_a_hallucinated_id_spelled_nan_is_not_a_number(runs, tmp_path, capsys):
    lines = (runs / "base" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["hallucinated_ids"] = ["NaN", "Infinity"]  # agent text is data
    lines[0] = json.dumps(first)
    ok = tmp_path / "run"
    ok.mkdir()
    (ok / "scores.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = cli(capsys, "gate", str(ok), "--min-adjusted", "0")
    assert code == 0 and "gate passed" in out


@pytest.mark.parametrize("command", ["info", "verify", "generate"])
@pytest.mark.parametrize("source", ["events.jsonl", "artifacts"])
def test_a_symlink_loop_in_a_pack_is_a_user_error(tmp_path, command, source, capsys):
    from groundeval.contract.packs import bundled_pack

    pack = tmp_path / "pack"
    shutil.copytree(bundled_pack("tiny"), pack)
    target = pack / source
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink()
    target.symlink_to(source)  # points at itself
    args = [command, str(pack)] + (["-o", str(tmp_path / "q.json")] if command == "generate" else [])
    code, out, err = cli(capsys, *args)
    assert code == 2 and "Traceback" not in err
    assert f"error: '{target}': a symbolic link loop" in err


SHOP = Path(__file__).resolve().parents[1] / "worlds" / "shop"


@pytest.mark.parametrize("labels", ["id,label\nno-such-trajectory,1\n", "", '{"id": "nope", "reward": 0}\n'])
def test_trajectories_verify_fails_when_the_labels_name_no_trajectory(tmp_path, labels, capsys):
    _run("worlds", "run", str(SHOP), "--agent", "gold", "--out", str(tmp_path / "run"))
    label_file = tmp_path / "labels.txt"
    label_file.write_text(labels, encoding="utf-8")
    traces = str(tmp_path / "run" / "traces.jsonl")
    out_dir = tmp_path / "checked"
    args = ("trajectories", "verify", traces, "--world", str(SHOP), "--out", str(out_dir), "-j", "1")
    code, out, err = cli(capsys, *args, "--labels", str(label_file))
    assert code == 2 and "precision" not in out
    assert f"error: --labels: {label_file} labels none of the 5 trajectories read" in err
    assert (out_dir / "summary.json").is_file()  # the verification itself is still written
    ids = [json.loads(line)["id"] for line in (out_dir / "kept.jsonl").read_text(encoding="utf-8").splitlines()]
    label_file.write_text(f"id,label\n{ids[0]},1\n", encoding="utf-8")
    code, out, err = cli(capsys, *args, "--labels", str(label_file))
    assert code == 0 and "labels: 1 · kept/label1 1" in out


def test_rl_diagnose_refuses_traces_with_nothing_to_diagnose(runs, tmp_path, capsys):
    questions = str(runs / "base" / "questions.json")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    code, out, err = cli(capsys, "rl", "diagnose", str(empty), "-q", questions)
    assert code == 2 and "mean S_adj" not in out
    assert f"error: {empty}: holds no trace: nothing to diagnose" in err
    other = runs / "other" / "traces.jsonl"  # another pack's traces: every one skipped
    code, out, err = cli(capsys, "rl", "diagnose", str(other), "-q", questions, "--json")
    assert code == 2 and out == ""
    assert f"none of its 3 traces answers a question of {questions}: nothing to diagnose" in err
    code, out, _ = cli(capsys, "rl", "diagnose", str(runs / "base" / "traces.jsonl"), "-q", questions, "--json")
    assert code == 0 and len(json.loads(out)["questions"]) == 21


def test_bench_gives_no_ratio_for_an_original_python_that_generates_nothing(tmp_path):
    """An interpreter that exits 0 and writes no questions passes for a generator only by its exit
    code: the row is an error and no speed-up is printed (a real process, run as the bench runs it)."""
    from groundeval.bench.matrix import _cell, _original_stage, measure

    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    python.chmod(0o755)
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "config.yaml").write_text("seed: 1\nactors: {}\n", encoding="utf-8")
    (pack / "events.jsonl").write_text('{"id": "e1"}\n', encoding="utf-8")
    (pack / "artifacts").mkdir()
    res: dict = {"generate": {"status": "ok", "seconds": 1.0, "cpu_seconds": 1.0, "peak_rss_mb": 100.0}}

    def stage(name, cmd, cwd=None):
        r = measure(cmd, cwd=cwd)
        res[name] = _cell(r, 1)
        return r

    _original_stage(stage, res, "original", pack, tmp_path / "run", str(python), None)
    assert res["original_generate"]["status"] == "error"
    assert "wrote no readable eval_questions.json" in res["original_generate"]["note"]
    assert res["original_ratio"]["status"] == "unavailable" and "speed_x" not in res["original_ratio"]


def test_the_pytest_gate_fails_a_baseline_with_no_question_in_common():
    from groundeval.testing.baseline import Baseline, compare_paired

    tracks = {"a1": "silence", "a2": "silence", "b1": "silence", "b2": "silence"}
    base = Baseline(tracks={"silence": 1.0}, overall=1.0, questions={"a1": 1.0, "a2": 1.0})
    now = Baseline(tracks={"silence": 1.0}, overall=1.0, questions={"b1": 1.0, "b2": 1.0})
    regressions, _ = compare_paired(base, now, 0.05, 0.05, tracks)
    assert regressions and regressions[0].startswith("overall: no question in common with the baseline")
    assert compare_paired(base, base, 0.05, 0.05, tracks)[0] == []  # the same questions still pass


class _Late:
    """Comes back 0.6 s after its 1 s deadline without calling a tool after it (so the runtime never
    cut it off), having answered first (``answer``: the true answer at once, one call, so that it is
    in time on a busy machine) or not."""

    name = "late"

    def __init__(self, answer: bool):
        self.answer = answer

    def run(self, episode):
        import time

        from groundeval.agents.answers import fit
        from groundeval.agents.playbook import playbook

        if self.answer:
            q = episode.question
            episode.submit(fit(playbook(q.track).oracle_answer(q.ground_truth, None, None, q), q.answer_schema))
        time.sleep(1.6)


def late_idle():
    return _Late(False)


def late_answer():
    return _Late(True)


@pytest.mark.parametrize(("factory", "status"), [("late_idle", "timeout"), ("late_answer", "completed")])
def test_an_agent_back_past_its_deadline_without_an_answer_timed_out(tmp_path, factory, status, capsys):
    out_dir = tmp_path / "run"
    args = ("run", "tiny", "--agent", f"{__name__}:{factory}", "--timeout", "1", "--limit", "1")
    code, out, err = cli(capsys, *args, "--out", str(out_dir), "-q")
    trace = json.loads((out_dir / "traces.jsonl").read_text(encoding="utf-8"))
    assert trace["status"] == status  # not 'no_answer': an empty episode, --allow-empty's to accept
    if status == "timeout":
        assert code == 1 and "the run failed: every episode errored (1 of 1); first: episode timed out" in err
    else:
        assert code == 0 and trace["final_answer"] is not None


def test_compare_refuses_two_runs_with_no_question_in_common(runs, capsys):
    code, out, err = cli(capsys, "compare", str(runs / "base"), str(runs / "other"))
    assert code == 2 and "newly failing" not in out
    assert "no question in common (21 in BASE, 3 in NEW): nothing to compare" in err
    code, out, _ = cli(capsys, "compare", str(runs / "base"), str(runs / "part"))  # a subset still compares
    assert code == 0 and "questions only in base: 19, only in new: 0" in out


def test_report_refuses_no_score_and_scores_of_another_question_set(runs, tmp_path, capsys):
    empty = tmp_path / "scores.jsonl"
    empty.write_text("\n", encoding="utf-8")
    code, out, err = cli(capsys, "report", str(empty), "--out", str(tmp_path / "r1"))
    assert code == 2 and f"error: {empty}: holds no score: nothing to report" in err
    assert not (tmp_path / "r1").exists()
    questions = runs / "base" / "questions.json"
    other = runs / "other" / "scores.jsonl"
    code, out, err = cli(capsys, "report", str(other), "--questions", str(questions), "--out", str(tmp_path / "r2"))
    assert code == 2 and f"none of its 21 questions has a score in {other}" in err
    code, out, _ = cli(capsys, "report", str(runs / "base"), "--out", str(tmp_path / "r3"))
    assert code == 0
    assert (tmp_path / "r3" / "report.json").read_bytes() == (runs / "base" / "report.json").read_bytes()


def test_run_refuses_a_question_set_with_no_question(runs, tmp_path, capsys):
    doc = json.loads((runs / "base" / "questions.json").read_text(encoding="utf-8"))
    doc["questions"] = []
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(doc), encoding="utf-8")
    for source in (["tiny", "--questions", str(questions)], [str(questions)]):
        out_dir = tmp_path / "run"
        code, out, err = cli(capsys, "run", *source, "--agent", "oracle", "--out", str(out_dir), "-q")
        assert code == 2 and "0/0 episodes" not in out
        assert f"error: {questions}: the question set holds no question: nothing to run" in err
        assert not out_dir.exists()


def test_eval_refuses_a_pack_that_generates_no_question(tmp_path, capsys):
    from groundeval.contract.packs import bundled_pack

    pack = tmp_path / "pack"
    shutil.copytree(bundled_pack("tiny"), pack)
    manifest = pack / "groundeval.yaml"
    caps = "".join(f"  max_{t}_questions: 0\n" for t in ("perspective", "counterfactual", "silence"))
    text = manifest.read_text(encoding="utf-8").replace("  max_per_actor: 5\n", "  max_per_actor: 5\n" + caps)
    manifest.write_text(text, encoding="utf-8")
    out_dir = tmp_path / "out"
    for command in ("eval", "run"):
        code, out, err = cli(capsys, command, str(pack), "--agent", "oracle", "--out", str(out_dir), "-q")
        assert code == 2 and "no_evidence" not in out
        assert f"error: {pack}: generates no question" in err
        assert not (out_dir / "report.json").exists()


@pytest.mark.parametrize("recording", ["[]", '{"resourceSpans": []}'])
def test_tasks_score_gives_a_run_with_no_call_zero(tmp_path, recording, capsys):
    contract = Path(__file__).resolve().parents[2] / "groundeval" / "tasks" / "examples" / "support" / "task.yaml"
    run = tmp_path / "empty.json"
    run.write_text(recording, encoding="utf-8")
    code, out, _ = cli(capsys, "tasks", "score", str(contract), str(run), "--json")
    score = json.loads(out.splitlines()[0])
    assert code == 1 and score["n_calls"] == 0
    assert score["s_adj"] == score["s_answer"] == score["s_traj"] == 0.0  # was 0.333: vacuous path credit
    assert set(score["traj_components"].values()) == {0.0}


def test_gate_does_not_take_an_unreadable_run_json_for_a_completed_run(runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(runs / "base", run)
    (run / "run.json").write_text('{"status": "compl', encoding="utf-8")  # torn
    code, out, _ = cli(capsys, "gate", str(run), "--min-adjusted", "0.9")
    assert code == 1 and "FAIL  run.status: the run did not complete (run.json: unreadable" in out
    (run / "run.json").unlink()  # no run record at all: nothing to say, as before
    code, out, _ = cli(capsys, "gate", str(run), "--min-adjusted", "0.9")
    assert code == 0 and "run.status" not in out


@pytest.mark.parametrize("record", ['{"status": "compl', "[1]", "null"])
def test_worlds_gate_fails_an_unreadable_run_json_without_a_traceback(tmp_path, record, capsys):
    out_dir = tmp_path / "run"
    _run("worlds", "run", str(SHOP), "--agent", "gold", "--out", str(out_dir))
    code, out, _ = cli(capsys, "worlds", "gate", str(out_dir), "--min-reward", "0.5")
    assert code == 0 and "pass: world shop" in out
    (out_dir / "run.json").write_text(record, encoding="utf-8")
    code, out, err = cli(capsys, "worlds", "gate", str(out_dir), "--min-reward", "0.5")
    assert code == 1 and "pass" not in out
    assert "FAIL run.json cannot be read (not a run record)" in err


class _Exits:
    """An agent that calls sys.exit(0) in the middle of its episode."""

    name = "exits"

    def run(self, episode):
        raise SystemExit(0)


def exits():
    return _Exits()


@pytest.mark.parametrize("source", ["world", "pack"])
def test_an_agent_calling_sys_exit_is_an_errored_episode_not_a_clean_exit(tmp_path, source, capsys):
    target = str(SHOP) if source == "world" else "tiny"
    out_dir = tmp_path / "run"
    code, out, err = cli(capsys, "run", target, "--agent", f"{__name__}:exits", "--out", str(out_dir), "--limit", "2")
    assert code == 1  # was 0 for a world: the agent's SystemExit ended the command, no report written
    assert "SystemExit" in err and "every episode errored" in err
    traces = [json.loads(line) for line in (out_dir / "traces.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(traces) == 2


def factory_raises():
    raise RuntimeError("cannot construct")


@pytest.mark.parametrize("source", ["world", "pack"])
@pytest.mark.parametrize(
    ("module", "body", "expected"),
    [
        ("audit_import_boom", 'raise RuntimeError("import boom")\n', "RuntimeError: import boom"),
        ("audit_syntax_bad", "def f(:\n", "SyntaxError: invalid syntax"),
        (None, None, "RuntimeError: cannot construct"),
    ],
)
def test_an_agent_that_cannot_be_made_is_a_usage_error(tmp_path, monkeypatch, source, module, body, expected, capsys):
    if module is None:
        spec = f"{__name__}:factory_raises"
    else:
        (tmp_path / f"{module}.py").write_text(body, encoding="utf-8")
        monkeypatch.syspath_prepend(str(tmp_path))
        spec = f"{module}:agent"
    target = str(SHOP) if source == "world" else "tiny"
    code, out, err = cli(capsys, "run", target, "--agent", spec, "--out", str(tmp_path / "run"), "--limit", "1")
    assert code == 2 and "Traceback" not in err  # was a traceback and exit 1
    assert err.startswith("error: --agent: cannot ") and expected in err and repr(spec) in err


@pytest.mark.parametrize(
    "threshold",
    [
        ["--max-drop", "nan", "--baseline", "BASE"],
        ["--alpha", "nan", "--baseline", "BASE", "--max-drop", "0.02"],
        ["--min-adjusted", "nan"],
        ["--max-violation-rate", "NaN"],
    ],
)
def test_gate_refuses_a_nan_threshold(runs, tmp_path, threshold, capsys):
    broken = tmp_path / "zero"
    broken.mkdir()
    lines = (runs / "base" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    zeroed = [json.dumps({**json.loads(line), "s_adj": 0.0, "s_combined": 0.0}) for line in lines]
    (broken / "scores.jsonl").write_text("\n".join(zeroed) + "\n", encoding="utf-8")
    args = [str(runs / "base") if a == "BASE" else a for a in threshold]
    code, out, err = cli(capsys, "gate", str(broken), *args)
    assert code == 2 and "gate passed" not in out  # --max-drop or --alpha nan let a drop from 1.0 to 0.0 pass
    assert f"Invalid value for '{threshold[0]}': nan is not a number" in err


@pytest.mark.parametrize(
    "args",
    [
        ["run", "tiny", "--agent", "oracle", "--timeout", "nan"],
        ["rl", "diagnose", "TRACES", "-q", "QUESTIONS", "--shaped", "--lam", "nan"],
    ],
)
def test_a_nan_option_is_a_usage_error_not_a_traceback(runs, tmp_path, args, capsys):
    fill = {"TRACES": str(runs / "base" / "traces.jsonl"), "QUESTIONS": str(runs / "base" / "questions.json")}
    args = [fill.get(a, a) for a in args] + (["--out", str(tmp_path / "o")] if args[0] == "run" else [])
    code, out, err = cli(capsys, *args)
    assert code == 2 and "nan is not a number" in err  # run: a ValueError traceback; rl: NaN rewards


class _Idle:
    name = "idle"

    def run(self, episode):
        return None


def idle():
    return _Idle()


@pytest.mark.parametrize("option", ["--min-reward", "--min-s-adj", "--max-violation-rate"])
def test_worlds_gate_refuses_a_nan_threshold(tmp_path, option, capsys):
    out_dir = tmp_path / "run"
    code, _, _ = cli(capsys, "run", str(SHOP), "--agent", f"{__name__}:idle", "--out", str(out_dir))
    assert code == 1  # every episode empty: reward 0
    code, out, err = cli(capsys, "worlds", "gate", str(out_dir), option, "nan", "--allow-errors")
    assert code == 2 and "pass" not in out  # --min-reward nan passed a run of reward 0
    assert "nan is not a number" in err


def test_a_nan_timeout_in_an_eval_file_or_the_pytest_gate_table_is_a_located_error(tmp_path, monkeypatch, capsys):
    from groundeval.errors import ContractError
    from groundeval.testing.config import parse_table

    (tmp_path / "groundeval.toml").write_text(
        'packs = ["tiny"]\nagents = ["oracle"]\ntimeout = nan\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "eval", "-q")
    assert code == 2 and "Traceback" not in err  # was a ValueError traceback from the episode's deadline
    assert "groundeval.toml field 'timeout': expected a positive number of seconds, got nan" in err
    with pytest.raises(ContractError, match="timeout"):
        parse_table({"timeout": float("nan")}, tmp_path / "pyproject.toml")


def test_score_refuses_a_zero_shot_file_with_no_trace(runs, tmp_path, capsys):
    empty = tmp_path / "zero-shot.jsonl"
    empty.write_text("", encoding="utf-8")
    base = runs / "base"
    args = ["score", str(base / "traces.jsonl"), "--questions", str(base / "questions.json")]
    code, out, err = cli(capsys, *args, "--zero-shot", str(empty), "--out", str(tmp_path / "o"))
    assert code == 2 and "scored" not in out  # was exit 0 and a report whose zero-shot floor was silently {}
    assert f"error: --zero-shot: {empty} holds no trace of a question of" in err
    assert not (tmp_path / "o").exists()


def test_bench_exits_1_when_no_stage_measured_anything(tmp_path, capsys):
    from groundeval.contract.packs import bundled_pack

    broken = tmp_path / "broken"
    shutil.copytree(bundled_pack("tiny"), broken)
    (broken / "events.jsonl").write_text('[{"id": "e1"}]\n', encoding="utf-8")  # a JSON array: no event
    code, out, err = cli(capsys, "bench", "--pack", str(broken), "--stages", "load,search", "--samples", "2")
    assert code == 1 and "error" in out  # was exit 0 with a table of errors
    assert "error: nothing was measured: all 2 stages failed or were unavailable" in err
    args = ("bench", "--pack", str(bundled_pack("tiny")), "--pack", str(broken), "--stages", "load", "--samples", "2")
    code, out, err = cli(capsys, *args)
    assert code == 0 and "nothing was measured" not in err  # one column measured: the table says the rest


def test_rl_hacking_refuses_a_question_set_with_no_question(runs, tmp_path, capsys):
    doc = json.loads((runs / "base" / "questions.json").read_text(encoding="utf-8"))
    doc["questions"] = []
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = cli(capsys, "rl", "hacking", "tiny", "--questions", str(questions), "--json")
    assert code == 2 and out == ""  # was an empty table and exit 0: no policy beat the oracle on nothing
    assert f"error: {questions}: holds no question: nothing to play the policies on" in err


@pytest.mark.parametrize("command", ["gate", "compare", "report"])
def test_scores_of_two_profiles_are_a_located_error_not_a_traceback(runs, tmp_path, command, capsys):
    lines = (runs / "base" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    third = json.loads(lines[2])
    third["profile"] = "paper"
    lines[2] = json.dumps(third)
    mixed = tmp_path / "run"
    mixed.mkdir()
    (mixed / "scores.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = {
        "gate": ["gate", str(mixed), "--min-adjusted", "0"],
        "compare": ["compare", str(runs / "base"), str(mixed)],
        "report": ["report", str(mixed), "--out", str(tmp_path / "r")],
    }[command]
    code, out, err = cli(capsys, *args)  # was a ValueError traceback from the aggregation
    assert code == 2 and "gate passed" not in out
    assert f"error: {mixed / 'scores.jsonl'}:3 field 'profile': scoring profile 'paper'" in err


def test_a_question_scored_twice_is_a_located_error(runs, tmp_path, capsys):
    lines = (runs / "base" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    doubled = tmp_path / "run"
    doubled.mkdir()
    (doubled / "scores.jsonl").write_text("\n".join([*lines, lines[4]]) + "\n", encoding="utf-8")
    qid = json.loads(lines[4])["question_id"]
    for args in (("gate", str(doubled), "--min-adjusted", "0"), ("compare", str(runs / "base"), str(doubled))):
        code, out, err = cli(capsys, *args)
        assert code == 2 and "gate passed" not in out  # was a pass over 22 scores of a 21-question run
        assert f"scores.jsonl:22 (record {qid}): a second score of question {qid!r} (the first is at line 5)" in err


def test_gate_fails_a_drop_check_against_a_baseline_with_no_score(runs, tmp_path, capsys):
    from groundeval.scoring.aggregate import aggregate

    empty = tmp_path / "baseline.json"
    empty.write_text(aggregate(None, None, []).model_dump_json(), encoding="utf-8")
    for test in ("paired", "point"):  # a report.json alone: the point check either way
        code, out, _ = cli(
            capsys, "gate", str(runs / "base"), "--baseline", str(empty), "--max-drop", "0", "--test", test
        )
        assert code == 1 and "gate passed" not in out  # was 'run S_adj 0.0000 → 1.0000 (drop -1.0000) within'
        assert "FAIL  overall.max_drop: the baseline holds no score: nothing to compare against" in out


@pytest.mark.parametrize(
    "text",
    [
        '{"format": "groundeval-baseline/1", "tracks": {"silence": 1.0}, "overall": 1.0, "questions": {"q": NaN}}',
        '{"overall": {"means": {"s_adj": NaN}}, "tracks": {}}',
    ],
)
def test_the_pytest_gate_refuses_a_baseline_holding_nan(tmp_path, text):
    from groundeval.errors import ContractError
    from groundeval.testing.baseline import read_baseline

    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ContractError):  # a NaN drop passes every comparison: it was read as a number
        read_baseline(path)


@pytest.mark.parametrize(
    ("field", "option", "value"),
    [
        ("reward", "--min-reward", "0.9"),
        ("run_s_adj", "--min-s-adj", "0.9"),
        ("run_violation_rate", "--max-violation-rate", "0.1"),
    ],
)
def test_worlds_gate_fails_a_nan_figure_in_the_report(tmp_path, field, option, value, capsys):
    out_dir = tmp_path / "run"
    _run("worlds", "run", str(SHOP), "--agent", "gold", "--out", str(out_dir))
    report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    report[field] = float("nan")
    (out_dir / "report.json").write_text(json.dumps(report), encoding="utf-8")
    capsys.readouterr()  # the run's own output
    code, out, err = cli(capsys, "worlds", "gate", str(out_dir), option, value)
    assert code == 1 and "pass" not in out and "nan" in err  # 'nan < 0.9' is false: it passed
