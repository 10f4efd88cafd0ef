"""Verifying trajectory files by replay, on the engine's test world (tests/worlds/shop): episodes
of the world's baseline agents written in each shape, a fabricated tool output, a truncated file,
labels — through the CLI, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundeval.cli.main import main
from groundeval.trajectories import read_trajectories
from groundeval.trajectories.verify import Verifier, first_difference
from groundeval.worlds import load_world
from groundeval.worlds.agents import applies, make_agent
from groundeval.worlds.episode import run_episode

SHOP = Path(__file__).resolve().parents[1] / "worlds" / "shop"
AGENTS = ("gold", "skip-confirm", "wrong-arg", "forbidden", "early-stop", "padding")


@pytest.fixture(scope="module")
def shop():
    w = load_world(SHOP)
    yield w
    w.close()


@pytest.fixture(scope="module")
def traces(shop):
    """(agent, world trace) of every baseline on every task it applies to."""
    out = []
    for agent in AGENTS:
        for task in shop.tasks:
            if applies(agent, shop, task):
                out.append((agent, run_episode(shop, task, make_agent(agent))))
    return out


def _text(v) -> str:
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True)


def as_openai(trace, rid: str, reward: float | None = None) -> dict:
    """A world trace written as OpenAI chat messages (calls placed among messages by step)."""
    msgs = [{"role": "system", "content": "policy"}]
    by_step = {}
    for m in trace.messages:
        by_step.setdefault(m.step, []).append(m)
    for step in range(len(trace.calls) + 1):
        for m in by_step.get(step, []):
            msgs.append({"role": m.role, "content": m.text})
        if step < len(trace.calls):
            c = trace.calls[step]
            cid = f"call_{step}"
            msgs.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {"name": c.tool, "arguments": json.dumps(c.arguments)},
                        }
                    ],
                }
            )
            out = c.result if c.status == "ok" else f"Error: {c.error}"
            msgs.append({"role": "tool", "tool_call_id": cid, "content": _text(out)})
    rec = {"id": rid, "task_id": trace.task_id, "messages": msgs}
    if reward is not None:
        rec["reward"] = reward
    return rec


def as_anthropic(trace, rid: str) -> dict:
    msgs = []
    by_step = {}
    for m in trace.messages:
        by_step.setdefault(m.step, []).append(m)
    for step in range(len(trace.calls) + 1):
        for m in by_step.get(step, []):
            msgs.append({"role": m.role, "content": [{"type": "text", "text": m.text}]})
        if step < len(trace.calls):
            c = trace.calls[step]
            msgs.append(
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": f"tu{step}", "name": c.tool, "input": c.arguments}],
                }
            )
            out = c.result if c.status == "ok" else c.error
            block = {
                "type": "tool_result",
                "tool_use_id": f"tu{step}",
                "content": _text(out),
                "is_error": c.status != "ok",
            }
            msgs.append({"role": "user", "content": [block]})
    return {"id": rid, "task_id": trace.task_id, "system": "policy", "messages": msgs}


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def run_cli(capsys, *args) -> tuple[int, str]:
    """(exit code, stdout + stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    got = capsys.readouterr()
    return code, got.out + got.err


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


# ---------------------------------------------------------------- the replay itself


def test_world_traces_of_each_baseline_get_its_verdict(shop, traces, tmp_path):
    f = write_jsonl(tmp_path / "traces.jsonl", [json.loads(t.model_dump_json()) for _, t in traces])
    v = Verifier(shop)
    got = {}
    for t in read_trajectories(f):
        r = v.verify(t)
        agent = t.id.split(":")[1]
        got.setdefault(agent, set()).add((r["kept"], r["verdict"]["failure_class"]))
        assert not [x for x in r["reasons"] if x["kind"] == "observation_mismatch"], (t.id, r["reasons"])
    assert got["gold"] == {(True, "completed")}
    assert got["padding"] == {(True, "completed")}
    assert got["skip-confirm"] == {(False, "policy_breach")}
    assert got["forbidden"] == {(False, "policy_breach")}
    assert {c for _, c in got["wrong-arg"]} == {"wrong_end_state"}
    assert {c for _, c in got["early-stop"]} == {"incomplete"}


def test_a_fabricated_output_is_named_by_step_and_field(shop, traces, tmp_path):
    agent, trace = next((a, t) for a, t in traces if a == "gold" and t.task_id == "refund-damaged")
    rec = as_openai(trace, "fab")
    tool_msgs = [m for m in rec["messages"] if m["role"] == "tool"]
    real = json.loads(tool_msgs[0]["content"])
    real["status"] = "delivered-yesterday"
    tool_msgs[0]["content"] = json.dumps(real)
    f = write_jsonl(tmp_path / "fab.jsonl", [rec])
    [t] = list(read_trajectories(f))
    r = Verifier(shop).verify(t)
    assert not r["kept"]
    [m] = [x for x in r["reasons"] if x["kind"] == "observation_mismatch"]
    assert m["trajectory"] == "fab" and m["step"] == 0
    idx = rec["messages"].index(next(x for x in rec["messages"] if x.get("tool_calls")))
    assert m["field"] == f"messages[{idx}].tool_calls[0].function.output.status"
    assert "delivered-yesterday" in m["message"]


def test_first_difference_walks_keys_in_order():
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1.0, "b": [1, 2]}) is None
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}) == ("b[1]", 2, 3)
    assert first_difference({"a": 1}, {"a": 1, "z": 0}) == ("z", "(absent)", 0)
    assert first_difference([1], [1, 2]) == ("[1]", "(absent)", 2)
    assert first_difference(True, 1) == ("", True, 1)


# ---------------------------------------------------------------- the command


@pytest.mark.slow
def test_verify_command_on_openai_anthropic_and_a_truncated_file(shop, traces, tmp_path, capsys):
    records = []
    for i, (agent, trace) in enumerate(traces):
        label = 1.0 if agent in ("gold", "padding") else 0.0
        if agent == "skip-confirm":
            label = 1.0  # a label that says pass where the policy was broken: a disagreement to list
        records.append(as_openai(trace, f"oa-{i}", label))
    f = write_jsonl(tmp_path / "openai.jsonl", records)
    with open(f, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(as_openai(traces[0][1], "cut"))[:200])  # a torn last line
    out = tmp_path / "out"
    code, text = run_cli(capsys, "trajectories", "verify", str(f), "--world", str(SHOP), "--out", str(out), "-j", "1")
    assert code == 0, text
    kept, rejected = lines(out / "kept.jsonl"), lines(out / "rejected.jsonl")
    assert len(kept) + len(rejected) == len(records) + 1
    assert {r["id"] for r in kept} == {f"oa-{i}" for i, (a, _) in enumerate(traces) if a in ("gold", "padding")}
    torn = [r for r in rejected if r["reasons"][0]["kind"] == "unreadable"]
    assert len(torn) == 1 and torn[0]["where"]["line"] == len(records) + 1
    assert "truncated" in torn[0]["reasons"][0]["message"]
    summary = json.loads((out / "summary.json").read_text())
    n_skip = sum(1 for a, _ in traces if a == "skip-confirm")
    assert summary["labels"]["confusion"] == {
        "tp": len(kept),
        "fp": 0,
        "fn": n_skip,
        "tn": len(records) - len(kept) - n_skip,
    }
    assert summary["labels"]["precision"] == 1.0
    assert summary["labels"]["recall"] == round(len(kept) / (len(kept) + n_skip), 6)
    dis = lines(out / "disagreements.jsonl")
    assert len(dis) == n_skip and all(d["reasons"][0]["kind"] == "policy_breach" for d in dis)
    assert "precision 1.000" in text and "disagreements" in text
    # the same trajectories as Anthropic messages, labels from a CSV file, two worker processes
    a = write_jsonl(tmp_path / "anthropic.jsonl", [as_anthropic(t, f"an-{i}") for i, (_, t) in enumerate(traces)])
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "id,label\n" + "".join(f"an-{i},{1 if ag == 'gold' else 0}\n" for i, (ag, _) in enumerate(traces))
    )
    out2 = tmp_path / "out2"
    code, text = run_cli(
        capsys, "trajectories", "verify", str(a), "-w", str(SHOP), "-o", str(out2), "--labels", str(labels), "-j", "2"
    )
    assert code == 0, text
    assert {r["id"] for r in lines(out2 / "kept.jsonl")} == {
        f"an-{i}" for i, (ag, _) in enumerate(traces) if ag in ("gold", "padding")
    }
    s2 = json.loads((out2 / "summary.json").read_text())
    n_pad = sum(1 for ag, _ in traces if ag == "padding")
    assert s2["labels"]["confusion"]["fp"] == n_pad and s2["shapes"] == {"anthropic": len(traces)}


@pytest.mark.slow
def test_outputs_are_the_same_bytes_with_one_or_two_workers(traces, tmp_path, capsys):
    f = write_jsonl(tmp_path / "t.jsonl", [json.loads(t.model_dump_json()) for _, t in traces] * 3)
    outs = []
    for j in ("1", "2"):
        out = tmp_path / f"o{j}"
        code, text = run_cli(capsys, "trajectories", "verify", str(f), "-w", str(SHOP), "-o", str(out), "-j", j)
        assert code == 0, text
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outs[0] == outs[1]


def test_unknown_world_and_missing_file_are_located_errors(tmp_path, capsys):
    f = write_jsonl(tmp_path / "x.jsonl", [{"messages": []}])
    code, text = run_cli(
        capsys, "trajectories", "verify", str(tmp_path / "nope.jsonl"), "-w", str(SHOP), "-o", str(tmp_path / "o")
    )
    assert code == 2 and "nope.jsonl" in text and "Traceback" not in text
    code, text = run_cli(
        capsys, "trajectories", "verify", str(f), "-w", str(tmp_path / "no-world"), "-o", str(tmp_path / "o")
    )
    assert code == 2 and "no-world" in text and "Traceback" not in text


def test_a_file_whose_trajectories_name_no_task_of_the_world_fails(traces, tmp_path, capsys):
    """Nothing verified is not a result (a wrong --world): exit 2 naming the cause, the outputs
    still written; one trajectory the world knows makes it a result again (exit 0)."""
    strangers = [
        {**as_openai(trace, f"x-{i}"), "task_id": f"no-such-task-{i}"} for i, (_, trace) in enumerate(traces[:3])
    ]
    f = write_jsonl(tmp_path / "strangers.jsonl", strangers)
    out = tmp_path / "out"
    code, text = run_cli(capsys, "trajectories", "verify", str(f), "-w", str(SHOP), "-o", str(out), "-j", "1")
    assert code == 2 and "names a task of world" in text and "Traceback" not in text
    assert len(lines(out / "rejected.jsonl")) == 3
    g = write_jsonl(tmp_path / "mixed.jsonl", [*strangers, as_openai(traces[0][1], "known")])
    code, text = run_cli(
        capsys, "trajectories", "verify", str(g), "-w", str(SHOP), "-o", str(tmp_path / "o2"), "-j", "1"
    )
    assert code == 0, text


@pytest.mark.parametrize(
    "name, content",
    [
        ("empty.jsonl", ""),
        ("blank.jsonl", "\n  \n\n"),
        ("list.json", "[]\n"),
        ("pretty-list.json", "[\n]\n"),
        ("results.json", json.dumps({"tasks": [], "simulations": []}, indent=2)),
    ],
)
def test_a_file_with_no_record_is_an_error_not_a_pass_of_zero(tmp_path, capsys, name, content):
    """Nothing to verify is not a result: exit 2 saying the file holds no records, the summary
    written with 0 records and no invented unreadable one (an empty file counted as 1 record,
    unreadable, and a list of none passed with exit 0)."""
    f = tmp_path / name
    f.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    code, text = run_cli(capsys, "trajectories", "verify", str(f), "-w", str(SHOP), "-o", str(out), "-j", "1")
    assert code == 2 and "holds no records" in text and "Traceback" not in text
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (summary["total"], summary["unreadable"], summary["rejected"]) == (0, 0, 0)
    assert lines(out / "rejected.jsonl") == []
    code, text = run_cli(capsys, "trajectories", "read", str(f))
    assert code == 2 and "holds no records" in text
