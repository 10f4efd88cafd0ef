"""Reading trajectory files: each shape from its content, streaming, located problems, the rest read."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.trajectories import ReadProblem, Trajectory, iter_records, read_trajectories
from groundeval.trajectories.stream import expand

# ---------------------------------------------------------------- records of each shape, built here


def openai_record(rid: str, order: str = "O-1", output: str = '{"status": "delivered"}', reward=1) -> dict:
    return {
        "id": rid,
        "task_id": "t1",
        "reward": reward,
        "messages": [
            {"role": "system", "content": "be kind"},
            {"role": "user", "content": [{"type": "text", "text": "where is my order"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_order", "arguments": json.dumps({"order_id": order})},
                    },
                    {"id": "c2", "type": "function", "function": {"name": "get_user", "arguments": "{oops"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "Error: bad arguments"},
            {"role": "tool", "tool_call_id": "c1", "content": output},
            {"role": "assistant", "content": "It was delivered."},
        ],
    }


def anthropic_record(rid: str) -> dict:
    return {
        "id": rid,
        "system": "be kind",
        "messages": [
            {"role": "user", "content": "refund O-2"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "tu1", "name": "get_order", "input": {"order_id": "O-2"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "tu1",
                        "content": [{"type": "text", "text": '{"total": 12.5}'}],
                        "is_error": False,
                    }
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Refunded 12.5"}]},
        ],
    }


def tau2_sim(sid: str, task_id: str = "3", reward: float = 1.0) -> dict:
    return {
        "id": sid,
        "task_id": task_id,
        "termination_reason": "user_stop",
        "reward_info": {"reward": reward},
        "trial": 0,
        "messages": [
            {"role": "user", "content": "hi", "turn_idx": 0},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "x1", "name": "get_user_details", "arguments": {"user_id": "u1"}}],
            },
            {"role": "tool", "id": "x1", "content": '{"user_id": "u1"}', "requestor": "assistant", "error": False},
            {
                "role": "user",
                "content": None,
                "tool_calls": [{"id": "x2", "name": "toggle_data", "arguments": {}, "requestor": "user"}],
            },
            {"role": "tool", "id": "x2", "content": "Mobile data is now ON", "requestor": "user", "error": False},
            {"role": "assistant", "content": "Done."},
        ],
    }


def tau_bench_entry(task_id: int, trial: int, reward: float) -> dict:
    return {
        "task_id": task_id,
        "trial": trial,
        "reward": reward,
        "info": {"task": {"user_id": "u1"}},
        "traj": [
            {"role": "system", "content": "policy"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "a", "function": {"name": "cancel", "arguments": '{"order_id": "#W1"}'}}],
            },
            {"role": "tool", "tool_call_id": "a", "name": "cancel", "content": '{"status": "cancelled"}'},
        ],
    }


def world_trace(task_id: str) -> dict:
    return {
        "kind": "world-trace",
        "version": 1,
        "world": "support_desk",
        "world_digest": "d0",
        "task_id": task_id,
        "trial": 0,
        "agent": "gold",
        "simulator": "deterministic",
        "messages": [{"role": "user", "text": "hi"}, {"role": "assistant", "text": "refunded"}],
        "calls": [
            {"step": 0, "tool": "get_order", "arguments": {"order_id": "O-1"}, "kind": "read", "status": "ok"},
            {
                "step": 1,
                "tool": "refund_order",
                "arguments": {"order_id": "O-1"},
                "kind": "write",
                "status": "error",
                "error": "not delivered",
            },
        ],
        "final_digest": "d1",
        "ended_by": "user_stop",
    }


def write_jsonl(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def read_all(path) -> list[Trajectory | ReadProblem]:
    return list(read_trajectories(path))


# ---------------------------------------------------------------- shapes


def test_openai_calls_pair_results_by_id_and_keep_broken_arguments(tmp_path):
    f = tmp_path / "runs.jsonl"
    write_jsonl(f, [openai_record("r1")])
    [t] = read_all(f)
    assert isinstance(t, Trajectory) and t.shape == "openai" and t.id == "r1" and t.task_id == "t1"
    assert t.reward == 1.0
    c0, c1 = t.calls
    assert (c0.tool, c0.arguments, c0.output, c0.step) == ("get_order", {"order_id": "O-1"}, {"status": "delivered"}, 0)
    assert c1.arguments is None and c1.raw_arguments == "{oops" and c1.output == "Error: bad arguments"
    assert c0.field == "messages[2].tool_calls[0].function"
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert t.messages[1].text == "where is my order" and t.messages[2].calls == (0, 1)


def test_anthropic_tool_use_and_result_blocks(tmp_path):
    f = tmp_path / "a.jsonl"
    write_jsonl(f, [anthropic_record("an")])
    [t] = read_all(f)
    assert t.shape == "anthropic" and t.id == "an" and t.reward is None
    [c] = t.calls
    assert (c.tool, c.arguments, c.output, c.error, c.call_id) == (
        "get_order",
        {"order_id": "O-2"},
        {"total": 12.5},
        False,
        "tu1",
    )
    assert t.messages[0].role == "system" and t.messages[-1].text == "Refunded 12.5"


def test_tau2_results_file_streams_its_simulations_with_user_tool_calls(tmp_path):
    f = tmp_path / "results.json"
    doc = {"timestamp": "now", "info": {"num_trials": 1}, "tasks": [{"id": "3"}], "simulations": []}
    doc["simulations"] = [tau2_sim("s1"), tau2_sim("s2", "4", 0.0)]
    f.write_text(json.dumps(doc, indent=4), encoding="utf-8")
    got = read_all(f)
    assert [(t.shape, t.id, t.task_id, t.reward) for t in got] == [("tau2", "s1", "3", 1.0), ("tau2", "s2", "4", 0.0)]
    t = got[0]
    assert [(c.tool, c.requestor, c.output) for c in t.calls] == [
        ("get_user_details", "assistant", {"user_id": "u1"}),
        ("toggle_data", "user", "Mobile data is now ON"),
    ]
    assert t.meta["termination_reason"] == "user_stop"
    assert got[1].where.index == 1 and got[1].where.line > got[0].where.line


def test_tau_bench_v1_list_and_world_traces(tmp_path):
    f = tmp_path / "v1.json"
    f.write_text(json.dumps([tau_bench_entry(7, 0, 1.0), tau_bench_entry(7, 1, 0.0)]), encoding="utf-8")
    got = read_all(f)
    assert [(t.shape, t.id, t.task_id, t.reward) for t in got] == [
        ("tau-bench", "7:0", "7", 1.0),
        ("tau-bench", "7:1", "7", 0.0),
    ]
    assert got[0].calls[0].output == {"status": "cancelled"}
    g = tmp_path / "traces.jsonl"
    write_jsonl(g, [world_trace("refund-1")])
    [t] = read_all(g)
    assert t.shape == "world-trace" and t.task_id == "refund-1"
    assert [(c.tool, c.error, c.output) for c in t.calls] == [
        ("get_order", False, None),
        ("refund_order", True, "not delivered"),
    ]


def test_bare_message_list_is_one_trajectory_in_both_layouts(tmp_path):
    msgs = openai_record("x")["messages"]
    a = tmp_path / "conv.json"
    a.write_text(json.dumps(msgs, indent=2), encoding="utf-8")
    b = tmp_path / "conv.jsonl"
    write_jsonl(b, [msgs, msgs])
    [ta] = read_all(a)
    assert ta.shape == "openai" and len(ta.calls) == 2 and ta.id == "#0"
    tb = read_all(b)
    assert [t.id for t in tb] == ["#0", "#1"] and all(len(t.calls) == 2 for t in tb)


# ---------------------------------------------------------------- problems, located; the rest read


def test_jsonl_bad_lines_are_located_and_the_rest_is_read(tmp_path):
    f = tmp_path / "mixed.jsonl"
    good = json.dumps(openai_record("g1"))
    lines = [
        good,
        '{"id": "broken", "messages": [',
        json.dumps({"id": "odd", "messages": [{"role": "assistant", "tool_calls": "nope"}]}),
        json.dumps({"hello": 1}),
        json.dumps(tau2_sim("s9")),
    ]
    f.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    got = read_all(f)
    assert [type(x).__name__ for x in got] == ["Trajectory", "ReadProblem", "ReadProblem", "ReadProblem", "Trajectory"]
    p1, p2, p3 = got[1], got[2], got[3]
    assert (p1.where.line, p1.where.index) == (2, 1) and "invalid JSON" in p1.message
    assert p2.where.line == 3 and p2.field == "messages[0].tool_calls" and "list" in p2.message
    assert p3.where.line == 4 and "known shape" in p3.message
    assert got[4].id == "s9" and got[4].where.line == 5


def test_truncated_last_line_is_told_as_truncated(tmp_path):
    f = tmp_path / "cut.jsonl"
    text = json.dumps(openai_record("a")) + "\n" + json.dumps(openai_record("b"))[:50]
    f.write_text(text, encoding="utf-8")
    got = read_all(f)
    assert got[0].id == "a"
    assert isinstance(got[1], ReadProblem) and got[1].where.line == 2 and "truncated" in got[1].message


def test_broken_array_element_is_skipped_and_the_next_ones_read(tmp_path):
    recs = [openai_record(f"r{i}") for i in range(4)]
    text = json.dumps(recs, indent=2)
    # break the second record: a value replaced by a bare word, deep inside it
    start = text.index('"id": "r1"')
    text = text[:start] + '"id": r1' + text[start + len('"id": "r1"') :]
    f = tmp_path / "broken.json"
    f.write_text(text, encoding="utf-8")
    got = read_all(f)
    kinds = [(type(x).__name__, getattr(x, "id", None)) for x in got]
    assert kinds == [("Trajectory", "r0"), ("ReadProblem", None), ("Trajectory", "r2"), ("Trajectory", "r3")]
    problem = got[1]
    assert problem.where.index == 1 and problem.where.line == text[: text.index('"id": r1')].count("\n") + 1


def test_unknown_container_text_and_not_utf8(tmp_path):
    f = tmp_path / "bad.json"
    f.write_bytes(b'[{"messages": []}, {"messages": [], "x": "\xff\xfe"}]')
    got = list(iter_records(f))
    assert isinstance(got[-1], ReadProblem) and "UTF-8" in got[-1].message
    g = tmp_path / "empty.json"
    g.write_text("\n \n", encoding="utf-8")
    [p] = list(iter_records(g))
    assert "no records" in p.message


# ---------------------------------------------------------------- properties


_SMALL = st.dictionaries(
    st.sampled_from(["a", "b", "text", "n"]),
    st.one_of(st.integers(-5, 10**6), st.text(max_size=12), st.booleans(), st.none()),
    max_size=4,
)


@settings(max_examples=40, deadline=None)
@given(
    recs=st.lists(_SMALL.map(lambda d: {"messages": [], **d}), min_size=1, max_size=8),
    layout=st.sampled_from(["jsonl", "array", "array-indent", "tau2"]),
)
def test_records_come_back_in_order_with_their_index(tmp_path_factory, recs, layout):
    f = tmp_path_factory.mktemp("p") / "f.json"
    if layout == "jsonl":
        f.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    elif layout == "tau2":
        f.write_text(json.dumps({"info": {}, "simulations": recs}, indent=1), encoding="utf-8")
    else:
        f.write_text(json.dumps(recs, indent=2 if layout == "array-indent" else None), encoding="utf-8")
    got = list(iter_records(f))
    assert [g.value for g in got] == recs
    if layout == "array":  # one line holding a list: one JSON Lines record, its items told apart
        assert [(g.where.index, g.where.item) for g in got] == [(0, i) for i in range(len(recs))]
    else:
        assert [g.where.index for g in got] == list(range(len(recs)))
    lazy = [r for x in iter_records(f, lazy=True) for r in expand(x)]
    assert [(g.value, g.where) for g in lazy] == [(g.value, g.where) for g in got]
    if layout == "jsonl":
        assert [g.where.line for g in got] == list(range(1, len(recs) + 1))


@settings(max_examples=40, deadline=None)
@given(
    recs=st.lists(_SMALL.map(lambda d: {"messages": [], **d}), min_size=1, max_size=6),
    cut=st.floats(0.05, 0.95),
    indent=st.sampled_from([None, 2]),
)
def test_a_truncated_array_gives_a_prefix_then_one_problem(tmp_path_factory, recs, cut, indent):
    text = json.dumps(recs, indent=indent)
    n = max(1, int(len(text) * cut))
    f = tmp_path_factory.mktemp("t") / "f.json"
    f.write_text(text[:n], encoding="utf-8")
    got = list(iter_records(f))
    values = [g.value for g in got if not isinstance(g, ReadProblem)]
    problems = [g for g in got if isinstance(g, ReadProblem)]
    assert values == recs[: len(values)]
    assert len(problems) == 1 and problems[0].where.file == str(f)


@pytest.mark.parametrize("chunk", [64, 1000])
def test_a_window_smaller_than_a_record(tmp_path, monkeypatch, chunk):
    """Records much longer than the read window still come back whole (the window grows)."""
    import groundeval.trajectories.stream as stream

    monkeypatch.setattr(stream, "_CHUNK", chunk)
    recs = [openai_record(f"r{i}", order="O-" + "9" * 500) for i in range(30)]
    f = tmp_path / "big.json"
    f.write_text(json.dumps(recs, indent=2), encoding="utf-8")
    got = list(read_trajectories(f))
    assert [t.id for t in got] == [f"r{i}" for i in range(30)]
    lines = [t.where.line for t in got]
    text = f.read_text()
    expect = [text[: text.index(f'"id": "r{i}"')].count("\n") for i in range(30)]
    assert lines == expect  # the line of the record's opening brace, one above its "id"
