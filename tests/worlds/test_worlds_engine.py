"""The world engine on the test world: tools, policy, simulator, episodes, verdicts."""

from __future__ import annotations

import pytest

from groundeval.worlds import STOP
from groundeval.worlds.agents import BASELINES, EXPECTED, applies, make_agent
from groundeval.worlds.episode import WorldEpisode, run_episode
from groundeval.worlds.model import WorldTask, WorldTrace
from groundeval.worlds.scorecard import scorecard
from groundeval.worlds.verdict import verdict


def test_every_baseline_gets_its_expected_class_where_it_applies(shop):
    seen = set()
    for name in BASELINES:
        for task in shop.tasks:
            v = verdict(shop, task, run_episode(shop, task, make_agent(name)))
            if applies(name, shop, task):
                seen.add(name)
                assert v.failure_class in EXPECTED[name], (name, task.id, v.failure_class, v.flags)
            if name == "gold":
                assert v.reward == 1.0 and v.s_adj == 1.0 and v.failure_class == "completed"
    assert seen == set(BASELINES)


def test_padding_lowers_efficiency_but_not_reward(shop):
    task = shop.task("status-only")
    gold = verdict(shop, task, run_episode(shop, task, make_agent("gold")))
    pad = verdict(shop, task, run_episode(shop, task, make_agent("padding")))
    assert pad.reward == gold.reward == 1.0
    assert pad.efficiency < gold.efficiency


def test_a_wrong_write_that_succeeds_costs_efficiency_a_read_off_the_path_does_not(shop):
    task = shop.task("refund-damaged")

    def efficiency(calls):
        ep = WorldEpisode(shop, task)
        for tool, args in calls:
            assert ep.call(tool, args)["ok"], tool
        return verdict(shop, task, ep.finish()).efficiency

    read = ("get_order", {"order_id": "O-1001"})
    assert efficiency([read, ("refund_order", {"order_id": "O-1001", "reason": "damaged"})]) == 1.0
    assert efficiency([read, ("find_customer", {"email": "ben@example.com"})]) == 1.0  # C_T 1, C_F 0
    assert efficiency([read, ("refund_order", {"order_id": "O-1001", "reason": "not_received"})]) == 0.0


def _episode(shop, task_id="refund-damaged"):
    return WorldEpisode(shop, shop.task(task_id))


def test_agent_mistakes_are_recorded_never_raised(shop):
    ep = _episode(shop)
    r = ep.call("no_such_tool", {"x": 1})
    assert r["ok"] is False and "unknown tool" in r["error"]
    r = ep.call("get_order", {"order_id": 1001})
    assert r["ok"] is False and "invalid arguments" in r["error"]
    r = ep.call("get_order", {"order_id": "O-9999"})
    assert r == {"ok": False, "result": None, "error": "no such order"}
    r = ep.call("delete_customer", {"customer_id": "C-1"})
    assert r["ok"] is False and r["error"].startswith("refused by policy")
    tr = ep.finish()
    assert [c.status for c in tr.calls] == ["invalid", "invalid", "error", "forbidden"]
    assert [f.cls for c in tr.calls for f in c.flags] == ["unknown_tool", "invalid_arguments", "forbidden_tool"]
    assert tr.final_digest == shop.digest or tr.final_digest  # the state did not change:
    v = verdict(shop, shop.task("refund-damaged"), tr)
    assert v.n_flagged == 3 and v.violation_rate == 0.75


def test_refused_write_leaves_state_and_is_flagged(shop):
    ep = _episode(shop)
    # refund without the get_order precondition: refused in refuse mode
    ep.say("shall I refund order O-1001?", confirm={"tool": "refund_order"})
    r = ep.call("refund_order", {"order_id": "O-1001", "reason": "damaged"})
    assert r["ok"] is False
    tr = ep.finish()
    assert tr.calls[0].status == "refused"
    assert {f.cls for f in tr.calls[0].flags} >= {"precondition_skipped"}
    assert tr.calls[0].diff == {}


def test_write_records_row_diff_and_expect_rows_error_undoes(shop):
    ep = _episode(shop, "cancel-pending")
    ep.call("get_order", {"order_id": "O-1002"})
    ep.say("Shall I cancel order O-1002?", confirm={"tool": "cancel_order"})
    ok = ep.call("cancel_order", {"order_id": "O-1002"})
    again = ep.call("cancel_order", {"order_id": "O-1002"})  # no longer pending: 0 rows
    tr = ep.finish()
    assert ok["ok"] is True and again["ok"] is False
    d = tr.calls[1].diff["orders"]
    assert d.changed[0].key == {"order_id": "O-1002"}
    assert (d.changed[0].before["status"], d.changed[0].after["status"]) == ("pending", "cancelled")
    assert tr.calls[2].diff == {} and tr.calls[2].status == "error"
    assert {f.cls for f in tr.calls[2].flags} == {"unconfirmed_write"}  # the one yes was used
    assert tr.final_digest == shop.expected(shop.task("cancel-pending"))[0]


def test_python_tool_error_and_duckdb_error_keep_state(shop):
    ep = _episode(shop, "ticket-and-refund")
    assert ep.call("open_ticket", {"order_id": "O-1004", "note": "a"})["ok"]
    assert not ep.call("open_ticket", {"order_id": "O-0", "note": "b"})["ok"]
    tr_digest_before = ep._state.digest()
    # a value DuckDB cannot use aborts its transaction: the episode's state is rebuilt
    bad = ep._state.handle
    with pytest.raises(Exception):
        bad.query("SELECT CAST($x AS INTEGER)", {"x": "not a number"})
    ep._state._recover()
    assert ep._state.digest() == tr_digest_before
    rows = ep._state.handle.query("SELECT ticket_id FROM tickets ORDER BY ticket_id")
    assert rows == [{"ticket_id": "T-001"}]
    ep.finish()


def test_simulator_reveals_facts_only_when_asked_and_stops(shop):
    ep = _episode(shop)
    assert ep.opening.startswith("Hi, my blender")
    assert ep.say("Hello! How can I help?") == "Hi, my blender arrived broken and I want my money back."
    assert "O-1001" not in ep.messages[-1].text
    assert ep.say("What is your order number?") == "order_id: O-1001"
    assert ep.say("Thanks, looking.") == STOP  # goal already repeated once
    assert ep.done and ep.say("hello?") == STOP
    tr = ep.finish()
    assert tr.ended_by == "user_stop" and tr.user_errors == []


def test_unsupported_user_statement_is_a_user_error(shop):
    class Liar:
        name = "liar"

        def session(self, task, writes):
            class S:
                def reply(self, message):
                    return "order_id: O-1003"

            return S()

    ep = WorldEpisode(shop, shop.task("refund-damaged"), simulator=Liar())
    ep.say("your order id?")
    tr = ep.finish()
    assert tr.user_errors and "O-1003" in tr.user_errors[0]
    assert verdict(shop, shop.task("refund-damaged"), tr).failure_class == "user_error"


class _LyingUser:
    """Gives the wrong order id (O-1003 for a task about O-1001): a statement its task does not support."""

    name = "liar"

    def session(self, task, writes):
        class S:
            def reply(self, message):
                return "order_id: O-1003"

        return S()


def test_a_user_error_does_not_hide_an_agent_failure_before_it(shop):
    """The agent breaks a rule (a forbidden delete) before the user says anything unsupported: the
    agent's class stands, the user's error is reported alongside."""
    task = shop.task("refund-damaged")
    ep = WorldEpisode(shop, task, simulator=_LyingUser())
    ep.call("delete_customer", {"customer_id": "C-1"})
    ep.say("your order id?")
    ep.call("refund_order", {"order_id": "O-1003", "reason": "damaged"})
    tr = ep.finish()
    assert tr.user_errors
    v = verdict(shop, task, tr)
    assert v.failure_class != "user_error" and "user_error" not in v.classes, v.classes
    assert v.user_errors == tr.user_errors and v.reward == 0.0


def test_a_user_error_before_any_agent_failure_is_the_users(shop):
    """Clean until the user's wrong id, then the agent acts on it: the user's error could have caused
    the wrong end state, so the episode is a user_error (and the failures after it are listed too)."""
    task = shop.task("refund-damaged")
    ep = WorldEpisode(shop, task, simulator=_LyingUser())
    ep.call("get_order", {"order_id": "O-1001"})
    ep.say("your order id?")
    ep.call("get_order", {"order_id": "O-1003"})
    ep.call("refund_order", {"order_id": "O-1003", "reason": "damaged"})  # not delivered: fails
    tr = ep.finish()
    v = verdict(shop, task, tr)
    assert v.failure_class == "user_error" and v.user_errors == tr.user_errors
    assert v.classes[1:] and v.reward == 0.0, v.classes


def test_agent_exception_is_agent_error_and_scores_zero(shop):
    class Crash:
        name = "crash"

        def run(self, episode):
            episode.call("get_order", {"order_id": "O-1001"})
            raise RuntimeError("boom")

    task = shop.task("refund-damaged")
    tr = run_episode(shop, task, Crash())
    assert tr.ended_by == "error" and "boom" in tr.error
    v = verdict(shop, task, tr)
    assert v.failure_class == "agent_error" and v.score == 0.0 and v.reward == 0.0


def test_empty_episode_scores_zero(shop):
    class Nothing:
        name = "nothing"

        def run(self, episode):
            return None

    task = shop.task("status-only")
    v = verdict(shop, task, run_episode(shop, task, Nothing()))
    assert v.score == 0.0 and v.failure_class == "incomplete"
    # a task whose right answer changes nothing and asks for no output: doing nothing leaves the
    # state right, yet an empty episode measured nothing, so it earns nothing anywhere
    quiet = task.model_copy(update={"required_outputs": []})
    v = verdict(shop, quiet, run_episode(shop, quiet, Nothing()))
    assert v.state_match and v.failure_class == "incomplete"
    assert (v.reward, v.score, v.s_adj, v.efficiency, v.observation_alignment) == (0.0, 0.0, 0.0, 0.0, 0.0)
    report = scorecard([v], [])
    assert (report.reward, report.state_consistency, report.tool_efficiency, report.observation_alignment) == (
        0.0,
        0.0,
        0.0,
        0.0,
    )


def test_errored_episode_earns_nothing_in_the_scorecard(shop):
    class Crash:
        name = "crash"

        def run(self, episode):
            raise RuntimeError("boom")

    task = shop.task("status-only")
    v = verdict(shop, task, run_episode(shop, task, Crash()))
    assert v.state_match and v.failure_class == "agent_error"
    assert (v.reward, v.score, v.efficiency, v.observation_alignment) == (0.0, 0.0, 0.0, 0.0)
    report = scorecard([v], [])
    assert (report.state_consistency, report.tool_efficiency, report.observation_alignment) == (0.0, 0.0, 0.0)


def test_wrong_state_verdict_has_row_diff(shop):
    task = shop.task("refund-damaged")
    v = verdict(shop, task, run_episode(shop, task, make_agent("wrong-arg")))
    assert v.failure_class == "wrong_end_state" and not v.state_match
    ch = v.state_diff["orders"].changed[0]
    assert ch.before["refund_reason"] == "damaged" and ch.after["refund_reason"] == "not_received"
    assert [a.tool for a in v.missing_actions] == ["refund_order"]
    assert [a.tool for a in v.extra_writes] == ["refund_order"]


def test_forged_trace_is_agent_error(shop):
    task = shop.task("refund-damaged")
    tr = run_episode(shop, task, make_agent("gold"))
    forged = WorldTrace.model_validate({**tr.model_dump(), "final_digest": "0" * 64})
    v = verdict(shop, task, forged)
    assert v.failure_class == "agent_error" and v.replay_problems and not v.order_violations


def test_max_steps_ends_the_episode(shop):
    task = shop.task("status-only").model_copy(update={"max_steps": 2})
    ep = WorldEpisode(shop, task)
    for _ in range(2):
        assert ep.call("get_order", {"order_id": "O-1003"})["ok"]
    r = ep.call("get_order", {"order_id": "O-1003"})
    assert not r["ok"] and "budget" in r["error"]
    assert ep.finish().ended_by == "max_steps"


def test_apply_mode_applies_and_flags(shop_copy):
    from groundeval.worlds import load_world

    text = (shop_copy / "world.yaml").read_text()
    (shop_copy / "world.yaml").write_text(text.replace("violation_mode: refuse", "violation_mode: apply"))
    w = load_world(shop_copy)
    try:
        task = w.task("refund-damaged")
        ep = WorldEpisode(w, task)
        assert ep.call("delete_customer", {"customer_id": "C-1"})["ok"]
        tr = ep.finish()
        assert tr.calls[0].flags[0].cls == "forbidden_tool"
        assert tr.calls[0].diff["customers"].removed[0]["customer_id"] == "C-1"
        v = verdict(w, task, tr)
        assert v.failure_class == "forbidden_side_effect" and "policy_breach" in v.classes
        assert v.state_diff["customers"].removed[0]["customer_id"] == "C-1"
        v = verdict(w, task, run_episode(w, task, make_agent("forbidden")))
        assert v.failure_class in EXPECTED["forbidden"]
    finally:
        w.close()


def test_key_changing_and_returning_writes_are_tracked_exactly(shop_copy):
    from groundeval.worlds import load_world
    from groundeval.worlds.verdict import replay_writes

    m = shop_copy / "world.yaml"
    extra = """  rename_order:
    kind: write
    arguments: {old: {type: string, required: true}, new: {type: string, required: true}}
    sql: UPDATE orders SET order_id = $new WHERE order_id = $old
  close_returning:
    kind: write
    arguments: {order_id: {type: string, required: true}}
    sql: UPDATE orders SET status = 'closed' WHERE order_id = $order_id RETURNING status
  sneaky_read:
    kind: read
    arguments: {order_id: {type: string, required: true}}
    sql: DELETE FROM orders WHERE order_id = $order_id
rules:"""
    m.write_text(m.read_text().replace("rules:", extra, 1))
    w = load_world(shop_copy)
    try:
        ep = WorldEpisode(w, w.task("status-only"))
        assert ep.call("rename_order", {"old": "O-1001", "new": "O-7777"})["ok"]
        assert ep.call("close_returning", {"order_id": "O-1002"})["result"] == [{"status": "closed"}]
        r = ep.call("sneaky_read", {"order_id": "O-1003"})
        assert not r["ok"] and "read tool" in r["error"]
        ep_state = ep._state
        truth = ep_state._query_changes()
        assert ep_state.changes() == truth
        assert truth["orders"]['["O-1001"]'] is None and truth["orders"]['["O-7777"]']["item"] == "blender"
        tr = ep.finish()
        diff = tr.calls[0].diff["orders"]
        assert [r["order_id"] for r in diff.added] == ["O-7777"] and [r["order_id"] for r in diff.removed] == ["O-1001"]
        assert replay_writes(w, tr.calls)[0] == tr.final_digest
    finally:
        w.close()


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("Shall I cancel your order?", "cancel_order"),
        ("Do you want me to refund the order?", "refund_order"),
        ("Shall I process the refund?", "refund_order"),  # a confirm_phrase
        ("Shall I look it up?", None),
        ("I will cancel your order.", None),  # no request to confirm
    ],
)
def test_free_text_confirmation_requests(text, tool):
    from groundeval.worlds.model import WorldMessage
    from groundeval.worlds.simulator import asked_confirmation

    writes = {"cancel_order": [], "refund_order": ["refund"], "open_ticket": []}
    assert asked_confirmation(WorldMessage(role="assistant", text=text), writes) == tool


def test_observation_alignment_compares_numbers_by_value(shop):
    task = shop.task("ticket-and-refund")  # the gold tells "1,250" (the result holds 1250)
    v = verdict(shop, task, run_episode(shop, task, make_agent("gold")))
    assert v.observation_alignment == 1.0

    class Fabricator:
        name = "fabricator"

        def run(self, episode):
            episode.call("get_order", {"order_id": "O-1004"})
            episode.say("Your order O-1004 totals 1,250.00 and O-2222 totals 99.")

    v = verdict(shop, task, run_episode(shop, task, Fabricator()))
    assert v.observation_alignment == 0.5  # O-1004 and 1250 are real; O-2222 and 99 are not


def test_agent_text_of_any_kind_is_kept_and_never_breaks_a_writer(shop, tmp_path):
    from groundeval.worlds.run import run_world, score_world

    class Weird:
        name = "weird"

        def run(self, episode):
            episode.say("hi \ud800 \x00 <script>")
            episode.call("get_order", {"order_id": "\udfff"})
            episode.call("get_order\ud800", {"x": 1})

    r = run_world(shop, Weird(), tmp_path / "a", task_ids=["status-only"])
    assert r.traces[0].messages[1].text == "hi \ud800 \x00 <script>"
    assert "&lt;script&gt;" in (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    score_world(shop, tmp_path / "a" / "traces.jsonl", tmp_path / "b")
    for name in ("verdicts.jsonl", "report.json", "report.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_arguments_that_are_not_json_are_recorded_not_raised(shop, tmp_path):
    from groundeval.worlds.run import run_world

    class Odd:
        name = "odd"

        def run(self, episode):
            episode.call("get_order", {"order_id": object()})
            episode.call("get_order", {("a", "b"): 1})
            episode.call("get_order", "O-1003")

    r = run_world(shop, Odd(), tmp_path / "o", task_ids=["status-only"])
    assert [c.status for c in r.traces[0].calls] == ["invalid", "invalid", "invalid"]


def test_the_scripts_own_words_are_never_a_user_error(shop):
    task = shop.task("status-only")
    task = task.model_copy(
        update={"user": task.user.model_copy(update={"opening": "No. order_id: wrong, just tell me"})}
    )
    ep = WorldEpisode(shop, task)
    ep.say("Shall I cancel the order?", confirm={"tool": "cancel_order"})  # not in confirms/declines: goal repeated
    assert ep.messages[-1].text == task.user.opening
    assert ep.finish().user_errors == []


def test_a_write_that_would_duplicate_a_key_is_an_error_and_changes_nothing(shop):
    from groundeval.worlds.verdict import replay_writes

    ep = WorldEpisode(shop, shop.task("ticket-and-refund"))
    assert ep.call("open_ticket", {"order_id": "O-1001", "note": "a"})["result"] == {"ticket_id": "T-001"}
    assert ep.call("open_ticket", {"order_id": "O-1002", "note": "b"})["result"] == {"ticket_id": "T-002"}
    assert ep.call("close_ticket", {"ticket_id": "T-001"})["ok"]
    again = ep.call("open_ticket", {"order_id": "O-1003", "note": "c"})  # numbers T-002 again
    assert again["ok"] is False and "T-002" in again["error"]
    assert ep.call("open_ticket", {"order_id": "O-1004", "note": "d"})["ok"] is False  # the same, still
    rows = ep._state.handle.query("SELECT ticket_id, note FROM tickets ORDER BY ticket_id")
    assert rows == [{"ticket_id": "T-002", "note": "b"}]
    assert ep._state.changes() == ep._state._query_changes()
    tr = ep.finish()
    assert replay_writes(shop, tr.calls)[0] == tr.final_digest


def test_mcp_hub_bounds_open_episodes_and_records_on_end(shop, tmp_path):
    pytest.importorskip("mcp")
    from groundeval.worlds.mcp import WorldHub
    from groundeval.worlds.run import read_traces

    hub = WorldHub(shop, tmp_path / "t.jsonl", max_open=2)
    a, _ = hub.call("start_episode", {"task_id": "status-only"})
    b, _ = hub.call("start_episode", {})
    refused, is_error = hub.call("start_episode", {})
    assert is_error and "2 episodes are open" in refused["error"]
    out, is_error = hub.call("get_order", {"episode_id": a["episode_id"], "order_id": "O-1003"})
    assert not is_error and out["result"]["status"] == "shipped"
    assert hub.call("get_order", {"episode_id": "nope", "order_id": "O-1003"})[1] is True
    hub.call("end_episode", {"episode_id": a["episode_id"]})
    assert hub.call("start_episode", {})[1] is False  # room again
    hub.close()
    traces = read_traces(tmp_path / "t.jsonl")
    assert len(traces) == 3 and traces[0].task_id == "status-only" and traces[0].calls[0].status == "ok"


def test_mcp_hub_serialises_calls_of_one_episode(shop, tmp_path):
    pytest.importorskip("mcp")
    import threading

    from groundeval.worlds.mcp import WorldHub
    from groundeval.worlds.run import read_traces

    hub = WorldHub(shop, tmp_path / "t.jsonl")
    eps = [hub.call("start_episode", {"task_id": t})[0]["episode_id"] for t in ("status-only", "cancel-pending")]

    def hammer(eid, order):
        for _ in range(15):
            hub.call("get_order", {"episode_id": eid, "order_id": order})
        hub.call("end_episode", {"episode_id": eid})

    threads = [threading.Thread(target=hammer, args=(e, o)) for e in eps for o in ("O-1003", "O-1002")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    hub.close()
    traces = read_traces(tmp_path / "t.jsonl")
    assert len(traces) == 2
    for tr in traces:  # every call of an episode ran on its own state, in one order, none lost mid-way
        assert [c.step for c in tr.calls] == list(range(len(tr.calls))) and all(c.status == "ok" for c in tr.calls)


def test_python_tool_that_crashes_is_an_error_result_not_the_agents_exception(shop_copy):
    # a world's own bug (a Python tool raising something else than WorldToolError) on arguments
    # the gold replay never tried: recorded as the call's error result, the state as before; it
    # does not reach the agent as an exception (an agent that does not catch it was agent_error,
    # one that caught it left no record of the call)
    from groundeval.worlds import load_world

    tools = shop_copy / "tools.py"
    tools.write_text(
        tools.read_text().replace(
            "    n = state.one(", "    if note == 'crash':\n        {}['bug']\n    n = state.one(", 1
        )
    )
    world = load_world(shop_copy)
    try:
        task = world.task("ticket-and-refund")
        ep = WorldEpisode(world, task)
        assert ep.call("open_ticket", {"order_id": "O-1004", "note": "a"})["ok"]
        digest = ep._state.digest()
        got = ep.call("open_ticket", {"order_id": "O-1004", "note": "crash"})
        assert not got["ok"] and "KeyError" in got["error"]
        assert ep.calls[-1].status == "error" and ep._state.digest() == digest
        assert ep.call("open_ticket", {"order_id": "O-1004", "note": "b"})["result"] == {"ticket_id": "T-002"}
        tr = ep.finish()
        assert tr.ended_by != "error"
    finally:
        world.close()


def test_a_trace_claiming_the_gold_digest_without_its_writes_is_agent_error(shop):
    # the expected digest copied onto a trace whose recorded writes do not produce it (the write
    # removed): the claimed end state is checked by replay whenever the writes differ from gold's
    task = shop.task("refund-damaged")
    tr = run_episode(shop, task, make_agent("gold"))
    kept = [c for c in tr.calls if c.tool != "refund_order"]
    forged = WorldTrace.model_validate({**tr.model_dump(), "calls": [c.model_dump() for c in kept]})
    v = verdict(shop, task, forged)
    assert v.state_match and v.failure_class == "agent_error" and v.reward == 0.0 and v.replay_problems
    assert verdict(shop, task, tr).failure_class == "completed"  # the real trace: no replay needed, completed


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_number_that_json_cannot_hold_is_an_invalid_call_recorded_as_sent(shop_copy, value):
    # NaN / infinity from a Python agent: JSON has no such number (the trace would write null and
    # a replay would differ), so it is kept as its text and the schema rejects it: an invalid call
    from groundeval.worlds import load_world
    from groundeval.worlds.run import dumps

    m = shop_copy / "world.yaml"
    m.write_text(
        m.read_text().replace(
            "  refund_order:\n",
            "  cheaper_than:\n    kind: read\n    description: Orders cheaper than x.\n"
            "    arguments:\n      x: {type: number, required: true}\n"
            "    sql: SELECT count(*) AS n FROM orders WHERE total < $x\n    returns: one\n"
            "  refund_order:\n",
            1,
        )
    )
    world = load_world(shop_copy)
    try:
        ep = WorldEpisode(world, world.task("status-only"))
        got = ep.call("cheaper_than", {"x": value})
        assert not got["ok"] and "is not of type 'number'" in got["error"]
        assert ep.call("cheaper_than", {"x": 50})["ok"]
        tr = ep.finish()
        assert tr.calls[0].status == "invalid" and tr.calls[0].arguments == {
            "x": repr(value).replace("inf", "Infinity").replace("nan", "NaN")
        }
        assert WorldTrace.model_validate_json(dumps(tr)) == tr
    finally:
        world.close()


@pytest.mark.parametrize(
    ("reply", "yes"),
    [("yes", True), ("Yes, go ahead.", True), ("yes!", True), ("Yesterday it broke.", False), ("yessir", False)],
)
def test_a_yes_is_the_word_yes_not_a_word_starting_with_it(reply, yes):
    # a model user answering "Yesterday ..." to a confirmation request neither grants the write
    # nor is counted as a confirmation its task does not give
    from groundeval.worlds.simulator import is_yes, statement_errors

    assert is_yes(reply) is yes
    task = WorldTask.model_validate({"id": "t", "user": {"opening": "hi"}, "gold_actions": []})
    assert bool(statement_errors(task, reply, "refund_order")) is yes


def test_arguments_and_text_nested_too_deeply_are_recorded_not_raised(shop):
    # an object nested 100,000 levels deep: every reader of it recurses (JSON, repr, str), so it
    # was a RecursionError out of call() and say(); now an invalid call / a message, recorded
    from groundeval.worlds.run import dumps

    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    ep = WorldEpisode(shop, shop.task("status-only"))
    got = ep.call("get_order", {"order_id": deep})
    assert not got["ok"] and ep.calls[-1].status == "invalid"
    assert not ep.call("get_order", deep)["ok"]
    ep.say(deep)
    tr = ep.finish()
    assert len(tr.calls) == 2 and "nested" in tr.messages[1].text
    assert WorldTrace.model_validate_json(dumps(tr)) == tr


def test_mcp_hub_say_records_a_call_without_text_and_ends_only_on_done_true(shop, tmp_path):
    # as the Python API and WorldEnv: a say without a text is the invalid call it is (was: an
    # empty message to the user), and done: "false" does not end the agent's part (was: bool())
    pytest.importorskip("mcp")
    from groundeval.worlds.mcp import WorldHub
    from groundeval.worlds.run import read_traces

    hub = WorldHub(shop, tmp_path / "t.jsonl")
    eid = hub.call("start_episode", {"task_id": "status-only"})[0]["episode_id"]
    out, is_error = hub.call("say", {"episode_id": eid, "text": "What is your order id?", "done": "false"})
    assert not is_error and "order_id" in out["reply"] and out["done"] is False
    out, is_error = hub.call("say", {"episode_id": eid, "confirm": {"tool": "refund_order"}})
    assert is_error and "text" in out["error"]
    hub.call("end_episode", {"episode_id": eid})
    hub.close()
    (tr,) = read_traces(tmp_path / "t.jsonl")
    assert [m.text for m in tr.messages if m.role == "assistant"] == ["What is your order id?"]
    assert [(c.tool, c.status) for c in tr.calls] == [("say", "invalid")]


class _Lying:
    """A user who gives O-1003 as their order number whenever asked for it (a model user may)."""

    name = "lying"

    def session(self, task, write_tools):
        class Session:
            def reply(self, message):
                return "order_id: O-1003" if "order" in message.text.lower() else STOP

        return Session()


@pytest.mark.parametrize(("question", "provoked"), [("Is your order O-1003?", True), ("What is your order id?", False)])
def test_a_wrong_fact_the_agent_put_in_the_users_mouth_is_not_a_user_error(shop, question, provoked):
    """Led by the agent ("Is your order O-1003?"), the user's wrong order number is the agent's
    doing: its own class stands. Asked plainly, a user who misleads a faultless agent is the
    user's error. ``user_errors`` lists the wrong fact both times."""
    task = shop.task("refund-damaged")
    ep = WorldEpisode(shop, task, simulator=_Lying())
    assert ep.say(question) == "order_id: O-1003"
    assert ep.call("get_order", {"order_id": "O-1003"})["ok"]
    v = verdict(shop, task, ep.finish())
    assert v.user_errors and "O-1003" in v.user_errors[0]
    assert ("user_error" in v.classes) is not provoked
    assert v.failure_class == ("incomplete" if provoked else "user_error")
