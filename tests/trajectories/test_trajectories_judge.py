"""τ²'s natural-language assertions decided by an LLM judge during ``trajectories verify``, against a
real local OpenAI-compatible server (judge_server.py) scripted to answer the judge.

The world is the engine's test world (tests/worlds/shop) given τ²-shaped criteria — the path the
verifier takes for a τ² world (a reward basis, natural-language assertions) — so these run without
the tau2 extra; tests/extras/tau2/test_tau2_judge.py runs the same on τ²'s own domains and
against τ²'s own evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("httpx")

from groundeval.cli.main import main  # noqa: E402
from groundeval.errors import UsageError  # noqa: E402
from groundeval.trajectories import read_trajectories  # noqa: E402
from groundeval.trajectories.judge import (  # noqa: E402
    AssertionJudge,
    JudgeSpec,
    conversation,
    make_judge,
    parse_verdicts,
    user_prompt,
)
from groundeval.trajectories.verify import Verifier, result_line  # noqa: E402
from groundeval.worlds import load_world  # noqa: E402
from groundeval.worlds.agents import make_agent  # noqa: E402
from groundeval.worlds.episode import run_episode  # noqa: E402
from groundeval.worlds.tau2.domain import Tau2Criteria  # noqa: E402

from judge_server import JudgeServer  # noqa: E402

SHOP = Path(__file__).resolve().parents[1] / "worlds" / "shop"
ASSERTIONS = ["The agent asked for the order number", "The agent told the user the refund was made"]


@pytest.fixture(scope="module")
def shop():
    w = load_world(SHOP)
    yield w
    w.close()


@pytest.fixture(scope="module")
def gold_file(shop, tmp_path_factory):
    """Every task's gold run, as world-trace records in one file."""
    f = tmp_path_factory.mktemp("judge") / "gold.jsonl"
    traces = [run_episode(shop, task, make_agent("gold")) for task in shop.tasks]
    f.write_text("".join(t.model_dump_json() + "\n" for t in traces), encoding="utf-8")
    return f


def trajectories(path):
    return list(read_trajectories(path))


def with_criteria(world, basis):
    """The world with τ²-shaped criteria on every task: ``basis`` and the two assertions."""
    world.criteria = {t.id: Tau2Criteria(reward_basis=list(basis), nl_assertions=list(ASSERTIONS)) for t in world.tasks}
    return world


@pytest.fixture
def server():
    with JudgeServer() as s:
        yield s


def judge_for(server, cache, **kw):
    return make_judge("openai:judge-model", base_url=server.url, cache_dir=cache, **kw)


def test_every_assertion_met_gives_reward_1_and_records_each_verdict(shop, gold_file, server, tmp_path):
    v = Verifier(with_criteria(shop, ["DB", "NL_ASSERTION"]), judge_for(server, tmp_path / "cache"))
    ts = trajectories(gold_file)
    results = [v.verify(t) for t in ts]
    assert server.requests == len(ts) and set(server.kinds) == {"groundeval"}
    for r in results:
        assert r["reward"] == 1.0 and r["kept"], r["reasons"]
        j = r["judge"]
        assert j["model"] == "openai:judge-model" and j["status"] == "ok" and j["attempts"] == 1
        assert [a["assertion"] for a in j["assertions"]] == ASSERTIONS
        assert all(a["met"] and a["justification"] == "scripted: met" for a in j["assertions"])
        assert r["tau2"]["needs_judge"] == []
    # what the judge was sent: its system prompt, the conversation and the numbered statements
    sent = server.payloads[0]
    assert sent["model"] == "judge-model" and sent["temperature"] == 0.0
    user = sent["messages"][-1]["content"]
    assert user == user_prompt(conversation(ts[0]), ASSERTIONS)
    assert f"1. {ASSERTIONS[0]}\n2. {ASSERTIONS[1]}" in user


def test_one_assertion_not_met_gives_reward_0_named_in_the_reason(shop, gold_file, server, tmp_path):
    server.fail = {"refund"}
    v = Verifier(with_criteria(shop, ["DB", "NL_ASSERTION"]), judge_for(server, tmp_path / "cache"))
    for t in trajectories(gold_file):
        r = v.verify(t)
        assert r["reward"] == 0.0 and not r["kept"]
        assert [a["met"] for a in r["judge"]["assertions"]] == [True, False]
        [reason] = [x for x in r["reasons"] if x["kind"] == "reward_0"]
        assert repr(ASSERTIONS[1]) in reason["message"] and "openai:judge-model" in reason["message"]


def test_assertions_outside_the_basis_are_judged_and_recorded_but_leave_the_reward(shop, gold_file, server, tmp_path):
    server.fail = {"refund"}
    v = Verifier(with_criteria(shop, ["DB"]), judge_for(server, tmp_path / "cache"))
    for t in trajectories(gold_file):
        r = v.verify(t)
        assert r["reward"] == 1.0 and r["kept"], r["reasons"]
        assert [a["met"] for a in r["judge"]["assertions"]] == [True, False]


def test_without_a_judge_the_reward_needs_one_and_nothing_is_sent(shop, gold_file, server):
    v = Verifier(with_criteria(shop, ["DB", "NL_ASSERTION"]))
    for t in trajectories(gold_file):
        r = v.verify(t)
        assert r["reward"] is None and "judge" not in r
        assert [x["kind"] for x in r["reasons"]] == ["needs_judge"]
        assert r["tau2"]["needs_judge"] == ASSERTIONS
    assert server.requests == 0


def test_the_cache_answers_a_second_run_with_no_request_and_the_same_bytes(shop, gold_file, server, tmp_path):
    server.fail = {"order number"}
    world = with_criteria(shop, ["DB", "NL_ASSERTION"])
    ts = trajectories(gold_file)
    first = "".join(result_line(Verifier(world, judge_for(server, tmp_path / "c")).verify(t)) for t in ts)
    sent = server.requests
    assert sent == len(ts)
    second = "".join(result_line(Verifier(world, judge_for(server, tmp_path / "c")).verify(t)) for t in ts)
    assert server.requests == sent and second == first
    # another cache folder asks again
    Verifier(world, judge_for(server, tmp_path / "other")).verify(ts[0])
    assert server.requests == sent + 1


def test_an_unreadable_reply_is_asked_again_then_a_judge_error_never_raised(shop, gold_file, server, tmp_path):
    world = with_criteria(shop, ["DB", "NL_ASSERTION"])
    t = trajectories(gold_file)[0]
    server.bad_replies = 1  # the first reply is prose: asked again, the second is read
    r = Verifier(world, judge_for(server, tmp_path / "c1")).verify(t)
    assert r["judge"]["status"] == "ok" and r["judge"]["attempts"] == 2 and r["reward"] == 1.0
    assert server.kinds == ["bad", "groundeval"]
    retry = server.payloads[1]["messages"][-1]["content"]
    assert retry.startswith(server.payloads[0]["messages"][-1]["content"]) and "no JSON object" in retry

    server.bad_replies = 10
    before = server.requests
    r = Verifier(world, judge_for(server, tmp_path / "c2")).verify(t)
    assert server.requests - before == 3
    assert r["reward"] is None and not r["kept"] and r["judge"]["status"] == "error"
    assert r["judge"]["raw"] == "All of the statements look fine to me."
    [reason] = r["reasons"]
    assert reason["kind"] == "judge_error" and reason["field"] == "nl_assertions"
    assert "no usable answer in 3 attempts" in reason["message"]


def test_a_provider_error_is_a_judge_error_and_an_unusable_judge_stops(shop, gold_file, server, tmp_path):
    from groundeval.agents.complete import text_model

    world = with_criteria(shop, ["DB", "NL_ASSERTION"])
    t = trajectories(gold_file)[0]
    server.status = 500
    model = text_model("openai:judge-model", base_url=server.url, retries=0, cache=str(tmp_path / "c"))
    r = Verifier(world, AssertionJudge(model)).verify(t)
    assert r["judge"]["status"] == "error" and r["judge"]["error"].startswith("provider: ")
    assert [x["kind"] for x in r["reasons"]] == ["judge_error"]
    server.status = 401  # a bad key: every trajectory would fail the same way
    with pytest.raises(UsageError, match="--judge.*401"):
        Verifier(world, judge_for(server, tmp_path / "c")).verify(t)


def test_a_batch_is_judged_several_at_once_with_the_same_results(shop, gold_file, server, tmp_path, monkeypatch):
    server.fail = {"refund"}
    server.delay = 0.05
    world = with_criteria(shop, ["DB", "NL_ASSERTION"])
    ts = trajectories(gold_file)
    one = Verifier(world, judge_for(server, tmp_path / "a", concurrency=1))
    one.prefetch(ts)
    alone = [result_line(one.verify(t)) for t in ts]
    assert server.most_in_flight == 1 and server.requests == len(ts)
    monkeypatch.setenv("JUDGE_KEY", "sesame")
    four = Verifier(world, judge_for(server, tmp_path / "b", concurrency=4, api_key_env="JUDGE_KEY"))
    four.prefetch(ts)
    assert server.requests == 2 * len(ts) and server.most_in_flight > 1  # sent ahead, at once
    assert [result_line(four.verify(t)) for t in ts] == alone  # verify asks nothing more
    assert server.requests == 2 * len(ts)
    assert server.headers[-1]["Authorization"] == "Bearer sesame"


def test_a_run_that_did_not_end_normally_is_not_sent(shop, gold_file, server, tmp_path):
    tau2_like = {
        "id": "cut",
        "task_id": shop.tasks[0].id,
        "termination_reason": "max_steps",
        "messages": [{"role": "user", "content": "hello"}],
    }
    f = tmp_path / "cut.jsonl"
    f.write_text(json.dumps(tau2_like) + "\n", encoding="utf-8")
    [t] = trajectories(f)
    r = Verifier(with_criteria(shop, ["DB", "NL_ASSERTION"]), judge_for(server, tmp_path / "c")).verify(t)
    assert r["reward"] == 0.0 and "judge" not in r and server.requests == 0


def test_cli_judge_options_on_a_world_without_assertions_change_nothing(gold_file, server, tmp_path, capsys):
    def run(*extra):
        out = tmp_path / f"out{len(extra)}"
        try:
            main(["trajectories", "verify", str(gold_file), "-w", str(SHOP), "-o", str(out), "-j", "1", *extra])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        return code, out

    code, plain = run()
    assert code == 0
    code, judged = run("--judge", "openai:judge-model", "--judge-base-url", server.url, "--judge-cache", str(tmp_path))
    assert code == 0 and server.requests == 0
    for name in ("kept.jsonl", "rejected.jsonl"):
        assert (plain / name).read_bytes() == (judged / name).read_bytes(), name
    summary = json.loads((judged / "summary.json").read_text())
    assert summary.pop("judge") == {"model": "openai:judge-model", "judged": 0, "all_met": 0, "not_met": 0, "error": 0}
    assert summary == json.loads((plain / "summary.json").read_text())
    capsys.readouterr()
    code, _ = run("--judge", "judge-model")
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --judge: expected") and len(err.strip().splitlines()) == 1


def test_judge_spec_is_picklable_and_builds_the_named_model(server, tmp_path):
    import pickle

    spec = JudgeSpec("openai:judge-model", base_url=server.url, cache_dir=str(tmp_path))
    judge = pickle.loads(pickle.dumps(spec)).build()
    assert judge.name == "openai:judge-model"
    assert pickle.loads(pickle.dumps(judge)).name == judge.name  # what a spawned worker receives


def test_conversation_shows_turns_calls_and_recorded_outputs_in_order(gold_file):
    t = trajectories(gold_file)[0]
    text = conversation(t)
    said = [m.text for m in t.messages if m.role in ("user", "assistant") and m.text]
    pos = [text.find(s) for s in said]
    assert all(p >= 0 for p in pos) and pos == sorted(pos)
    for c in t.calls:
        assert f"{c.requestor} calls {c.tool} with {json.dumps(c.arguments, sort_keys=True)}" in text
    assert conversation(t) == text


@settings(max_examples=40, deadline=None)
@given(
    mets=st.lists(st.booleans(), min_size=1, max_size=6),
    order=st.randoms(use_true_random=False),
    drop=st.booleans(),
    dup=st.booleans(),
)
def test_parse_verdicts_needs_exactly_one_verdict_per_statement_in_any_order(mets, order, drop, dup):
    items = [{"id": i + 1, "met": m, "justification": f"j{i}"} for i, m in enumerate(mets)]
    order.shuffle(items)
    if not drop and not dup:
        got = parse_verdicts("```json\n" + json.dumps({"verdicts": items}) + "\n```", len(mets))
        assert got == [(m, f"j{i}") for i, m in enumerate(mets)]
        return
    if drop:
        items = items[1:]
    if dup:
        items = items + items[:1] if items else [{"id": 1, "met": True}] * 2
    with pytest.raises(ValueError):
        parse_verdicts(json.dumps({"verdicts": items}), len(mets))


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("yes", "no JSON object"),
        ('{"results": []}', "no 'verdicts' list"),
        ('{"verdicts": [{"id": 1, "met": "yes"}]}', "not true or false"),
        ('{"verdicts": [{"id": 3, "met": true}]}', "names no statement"),
        ('{"verdicts": [{"id": true, "met": true}]}', "names no statement"),
    ],
)
def test_parse_verdicts_says_what_is_wrong(reply, problem):
    with pytest.raises(ValueError, match=problem):
        parse_verdicts(reply, 1)
