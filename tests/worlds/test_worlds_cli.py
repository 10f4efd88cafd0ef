"""``groundeval run/eval WORLD`` and ``groundeval worlds score``: files, exit codes, errors."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import cli

SHOP = Path(__file__).resolve().parent / "shop"


def test_run_world_writes_traces_verdicts_and_reports(capsys, tmp_path):
    out = tmp_path / "gold"
    code, stdout, err = cli(capsys, "run", str(SHOP), "--agent", "gold", "--out", str(out), "-q")
    assert code == 0, err
    assert "reward 1.000" in stdout
    for name in ("traces.jsonl", "verdicts.jsonl", "report.json", "report.md", "report.html", "run.json"):
        assert (out / name).is_file(), name
    report = json.loads((out / "report.json").read_text())
    assert report["episodes"] == 5 and report["reward"] == 1.0
    assert "refund-damaged" in (out / "report.html").read_text()
    # re-scoring the saved traces gives the same verdicts, byte for byte
    code, _, err = cli(capsys, "worlds", "score", str(SHOP), str(out / "traces.jsonl"), "--out", str(tmp_path / "re"))
    assert code == 0, err
    assert (tmp_path / "re" / "verdicts.jsonl").read_bytes() == (out / "verdicts.jsonl").read_bytes()
    assert (tmp_path / "re" / "report.json").read_bytes() == (out / "report.json").read_bytes()


def test_eval_world_and_existing_out_needs_resume(capsys, tmp_path):
    out = tmp_path / "e"
    code, stdout, err = cli(capsys, "eval", str(SHOP), "--agent", "skip-confirm", "--out", str(out), "-q")
    assert code == 0, err
    assert "policy_breach 3" in stdout
    code, _, err = cli(capsys, "run", str(SHOP), "--agent", "gold", "--out", str(out), "-q")
    assert code == 2 and "--resume" in err


def test_resume_runs_only_missing_and_gives_same_bytes(capsys, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli(capsys, "run", str(SHOP), "--agent", "padding", "--out", str(a), "--trials", "2", "-q")[0] == 0
    assert cli(capsys, "run", str(SHOP), "--agent", "padding", "--out", str(b), "--trials", "2", "-q")[0] == 0
    lines = (b / "traces.jsonl").read_text().splitlines(keepends=True)
    (b / "traces.jsonl").write_text("".join(lines[:3]) + lines[3][:40])  # killed mid-write
    code, _, err = cli(
        capsys, "run", str(SHOP), "--agent", "padding", "--out", str(b), "--trials", "2", "--resume", "-q"
    )
    assert code == 0, err
    assert json.loads((b / "run.json").read_text())["episodes_run"] == 7
    for name in ("traces.jsonl", "verdicts.jsonl", "report.json", "report.md", "report.html"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_bad_world_is_exit_2_located(capsys, shop_copy, tmp_path):
    m = shop_copy / "world.yaml"
    m.write_text(m.read_text().replace("violation_mode: refuse", "violation_mode: sometimes"))
    code, _, err = cli(capsys, "run", str(shop_copy), "--agent", "gold", "--out", str(tmp_path / "o"))
    assert code == 2
    assert "world.yaml:6 field 'violation_mode'" in err and "Traceback" not in err


def test_unknown_world_agent_is_a_usage_error(capsys, tmp_path):
    code, _, err = cli(capsys, "run", str(SHOP), "--agent", "nobody", "--out", str(tmp_path / "o"))
    assert code == 2 and "unknown world agent" in err


def test_worlds_check(capsys, shop_copy):
    code, out, _ = cli(capsys, "worlds", "check", str(SHOP))
    assert code == 0 and "5 tasks (3 with writes, 2 that change nothing)" in out
    t = shop_copy / "tasks.jsonl"
    t.write_text(t.read_text().replace('"reason": "damaged"}}, {"tool"', '"reason": "broken"}}, {"tool"', 1))
    code, _, err = cli(capsys, "worlds", "check", str(shop_copy))
    assert code == 2 and "tasks.jsonl:5 field 'gold_actions.2.arguments'" in err and "'broken'" in err


def test_score_refuses_traces_of_a_changed_world(capsys, tmp_path, shop_copy):
    out = tmp_path / "g"
    assert cli(capsys, "run", str(shop_copy), "--agent", "gold", "--out", str(out), "-q")[0] == 0
    s = shop_copy / "state" / "orders.jsonl"
    s.write_text(s.read_text().replace('"total": 25', '"total": 26'))
    code, _, err = cli(capsys, "worlds", "score", str(shop_copy), str(out / "traces.jsonl"))
    assert code == 2 and "(record 1) field 'world_digest'" in err and "the world changed since" in err


def test_report_html_shows_what_the_verdict_found(capsys, tmp_path):
    out = tmp_path / "w"
    assert cli(capsys, "run", str(SHOP), "--agent", "wrong-arg", "--out", str(out), "-q")[0] == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert (
        "missing writes: cancel_order" in html and "state, table orders: 0 unexpected, 0 missing, 1 different" in html
    )


def test_tau2_names_reach_the_worlds_loader(capsys, tmp_path):
    import importlib.util

    code, out, err = cli(capsys, "run", "tau2:mock", "--agent", "gold", "--out", str(tmp_path / "t"), "-q")
    if importlib.util.find_spec("tau2") is None:
        assert code == 2 and "tau2" in err and "Traceback" not in err  # the extra's one-line message
    else:
        assert code == 0 and "reward 1.000" in out


class _Crash:
    name = "crash"

    def run(self, episode):
        if episode.task_id != "status-only":
            raise RuntimeError("boom")
        episode.say("Your toaster has shipped. Anything else?", done=True)


def crash_factory():
    return _Crash()


def test_errored_episodes_are_told_and_a_run_that_only_errored_exits_1(capsys, tmp_path, monkeypatch):
    import sys

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    sys.modules.setdefault("test_worlds_cli", sys.modules[__name__])
    code, _, err = cli(
        capsys, "run", str(SHOP), "--agent", "test_worlds_cli:crash_factory", "--out", str(tmp_path / "c")
    )
    assert code == 0 and "warning: 4 of 5 episodes errored" in err and "boom" in err
    verdicts = [json.loads(x) for x in (tmp_path / "c" / "verdicts.jsonl").read_text().splitlines()]
    assert sorted(v["failure_class"] for v in verdicts).count("agent_error") == 4


class _Always:
    name = "always"

    def run(self, episode):
        raise RuntimeError("down")


def always_factory():
    return _Always()


def test_a_run_where_every_episode_errored_exits_1(capsys, tmp_path, monkeypatch):
    import sys

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    sys.modules.setdefault("test_worlds_cli", sys.modules[__name__])
    code, _, err = cli(
        capsys, "run", str(SHOP), "--agent", "test_worlds_cli:always_factory", "--out", str(tmp_path / "a")
    )
    assert code == 1 and "every episode errored" in err and "down" in err
    assert json.loads((tmp_path / "a" / "run.json").read_text())["status"] == "failed"


def test_worlds_gate(capsys, tmp_path, monkeypatch):
    import sys

    gold, skip = tmp_path / "gold", tmp_path / "skip"
    assert cli(capsys, "run", str(SHOP), "--agent", "gold", "--out", str(gold), "-q")[0] == 0
    assert cli(capsys, "run", str(SHOP), "--agent", "skip-confirm", "--out", str(skip), "-q")[0] == 0
    code, out, _ = cli(capsys, "worlds", "gate", str(gold), "--min-reward", "1", "--max-violation-rate", "0")
    assert code == 0 and out.startswith("pass")
    code, _, err = cli(capsys, "worlds", "gate", str(skip), "--min-reward", "1", "--max-violation-rate", "0")
    assert code == 1 and "FAIL run violation rate" in err and "reward" not in err.split("FAIL", 2)[1]
    assert cli(capsys, "worlds", "gate", str(gold))[0] == 2  # no threshold named
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    sys.modules.setdefault("test_worlds_cli", sys.modules[__name__])
    crash = tmp_path / "crash"
    cli(capsys, "run", str(SHOP), "--agent", "test_worlds_cli:crash_factory", "--out", str(crash))
    code, _, err = cli(capsys, "worlds", "gate", str(crash), "--min-reward", "0")
    assert code == 1 and "4 episodes are agent_error" in err
    assert cli(capsys, "worlds", "gate", str(crash), "--min-reward", "0", "--allow-errors")[0] == 0


class _Idle:
    name = "idle"

    def run(self, episode):
        return None  # a broken integration: never speaks, never calls


def idle_factory():
    return _Idle()


def test_a_run_where_the_agent_did_nothing_fails_and_the_gate_fails_it(capsys, tmp_path, monkeypatch):
    import sys

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    sys.modules.setdefault("test_worlds_cli", sys.modules[__name__])
    out = tmp_path / "idle"
    code, _, err = cli(capsys, "run", str(SHOP), "--agent", "test_worlds_cli:idle_factory", "--out", str(out))
    assert code == 1 and "every episode is empty" in err
    code, _, err = cli(capsys, "worlds", "gate", str(out), "--min-reward", "0")
    assert code == 1 and "5 episodes are empty" in err
    assert cli(capsys, "worlds", "gate", str(out), "--min-reward", "0", "--allow-errors")[0] == 0


def test_score_locates_traces_that_do_not_belong_together(capsys, tmp_path):
    # an unknown task, a second trace of one (task, trial), two agents in one file: each a located
    # error (file, record, field) — not an error naming the world folder, and not a report that
    # counts an episode twice or names only the first agent
    out = tmp_path / "g"
    assert cli(capsys, "run", str(SHOP), "--agent", "gold", "--out", str(out), "-q")[0] == 0
    lines = (out / "traces.jsonl").read_text().splitlines()

    def score(records):
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return cli(capsys, "worlds", "score", str(SHOP), str(path), "--out", str(tmp_path / "s"))

    first, second = json.loads(lines[0]), json.loads(lines[1])
    code, _, err = score([first, {**second, "task_id": "nope"}])
    assert code == 2 and "t.jsonl (record 2) field 'task_id'" in err and "'nope'" in err
    code, _, err = score([first, second, first])
    assert code == 2 and "t.jsonl (record 3) field 'trial'" in err and "again" in err
    code, _, err = score([first, {**second, "agent": "other"}])
    assert code == 2 and "t.jsonl (record 2) field 'agent'" in err


def test_resume_skips_a_trace_of_a_task_the_world_no_longer_has(capsys, tmp_path):
    out = tmp_path / "g"
    assert cli(capsys, "run", str(SHOP), "--agent", "gold", "--out", str(out), "-q")[0] == 0
    path = out / "traces.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[1:], json.dumps({**json.loads(lines[0]), "task_id": "gone"})]) + "\n")
    code, _, err = cli(capsys, "run", str(SHOP), "--agent", "gold", "--out", str(out), "--resume", "-q")
    assert code == 0, err
    assert path.read_text().splitlines() == lines  # the missing task run again, the stray trace dropped


def test_a_world_command_given_a_pack_says_it_is_a_pack(capsys, tmp_path):
    for args in (
        ("worlds", "check", "tiny"),
        ("worlds", "run", "tiny", "--agent", "gold", "--out", str(tmp_path / "o")),
    ):
        code, _, err = cli(capsys, *args)
        assert code == 2, args
        assert "this is an evaluation pack, not a world" in err and "groundeval verify" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli(capsys, "worlds", "check", str(empty))
    assert code == 2 and "no world here (expected world.yaml or world.yml)" in err
