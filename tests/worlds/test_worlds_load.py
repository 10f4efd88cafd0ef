"""Reading a world: every bad input is one located error (file, line, field)."""

from __future__ import annotations

import json

import pytest

from groundeval.errors import ContractError
from groundeval.worlds import load_world


def _problem(path):
    with pytest.raises(ContractError) as exc:
        load_world(path).close()
    return exc.value.problems[0]


def test_unknown_manifest_key_is_located(shop_copy):
    m = shop_copy / "world.yaml"
    m.write_text(
        m.read_text().replace("    kind: read\n    description: Look up", "    kind: reed\n    description: Look up")
    )
    p = _problem(shop_copy)
    assert p.file.endswith("world.yaml") and p.field == "tools.get_order.kind"
    assert m.read_text().split("\n")[p.line - 1].strip() == "kind: reed"


def test_confirm_before_must_name_a_write(shop_copy):
    m = shop_copy / "world.yaml"
    m.write_text(m.read_text().replace("confirm_before: [refund_order, cancel_order]", "confirm_before: [get_order]"))
    assert "not a write tool" in _problem(shop_copy).message


def test_bad_task_line_and_field(shop_copy):
    t = shop_copy / "tasks.jsonl"
    lines = t.read_text().splitlines()
    obj = json.loads(lines[2])
    obj["gold_actions"][0]["arguments"] = {"order_id": 3}
    lines[2] = json.dumps(obj)
    t.write_text("\n".join(lines) + "\n")
    p = _problem(shop_copy)
    assert p.file.endswith("tasks.jsonl") and p.line == 3 and p.field == "gold_actions.0.arguments"


def test_task_schema_error_is_located(shop_copy):
    t = shop_copy / "tasks.jsonl"
    lines = t.read_text().splitlines()
    obj = json.loads(lines[1])
    del obj["user"]["opening"]
    lines[1] = json.dumps(obj)
    t.write_text("\n".join(lines) + "\n")
    p = _problem(shop_copy)
    assert (p.line, p.field) == (2, "user.opening")


def test_gold_write_that_fails_is_a_contract_error(shop_copy):
    t = shop_copy / "tasks.jsonl"
    t.write_text(
        t.read_text().replace('"arguments": {"order_id": "O-1002"}}]', '"arguments": {"order_id": "O-1003"}}]')
    )
    p = _problem(shop_copy)
    assert "gold action 1 (cancel_order) fails" in p.message and p.field == "gold_actions.1"


def test_duplicate_key_row_is_located(shop_copy):
    s = shop_copy / "state" / "orders.jsonl"
    rows = s.read_text().splitlines()
    s.write_text("\n".join([*rows, rows[1]]) + "\n")
    p = _problem(shop_copy)
    assert p.file.endswith("orders.jsonl") and p.line == 5 and "of line 2 again" in p.message


def test_mixed_column_types_are_located(shop_copy):
    s = shop_copy / "state" / "orders.jsonl"
    rows = s.read_text().splitlines()
    obj = json.loads(rows[2])
    obj["total"] = "forty"
    rows[2] = json.dumps(obj)
    s.write_text("\n".join(rows) + "\n")
    p = _problem(shop_copy)
    assert (p.line, p.field) == (3, "total")


def test_table_outside_folder_is_refused(shop_copy):
    m = shop_copy / "world.yaml"
    m.write_text(m.read_text().replace("state/orders.jsonl", "../orders.jsonl"))
    (shop_copy.parent / "orders.jsonl").write_text((shop_copy / "state/orders.jsonl").read_text())
    p = _problem(shop_copy)
    assert "outside the world folder" in p.message and p.field == "tables.orders.source"


def test_table_row_order_does_not_change_digest(shop_copy, shop):
    s = shop_copy / "state" / "orders.jsonl"
    s.write_text("\n".join(reversed(s.read_text().splitlines())) + "\n")
    w = load_world(shop_copy)
    try:
        assert w.digest == shop.digest
        assert [w.expected(t)[0] for t in w.tasks] == [shop.expected(t)[0] for t in shop.tasks]
    finally:
        w.close()


def test_gold_action_expected_to_fail(shop_copy):
    t = shop_copy / "tasks.jsonl"
    lines = t.read_text().splitlines()
    obj = json.loads(lines[2])  # status-only
    obj["gold_actions"].insert(0, {"tool": "get_order", "arguments": {"order_id": "O-9"}, "expect_error": True})
    lines[2] = json.dumps(obj)
    t.write_text("\n".join(lines) + "\n")
    w = load_world(shop_copy)
    try:
        from groundeval.worlds.agents import make_agent
        from groundeval.worlds.episode import run_episode
        from groundeval.worlds.verdict import verdict

        task = w.task("status-only")
        v = verdict(w, task, run_episode(w, task, make_agent("gold")))
        assert v.failure_class == "completed" and v.efficiency == 1.0
    finally:
        w.close()
    obj["gold_actions"][0]["arguments"] = {"order_id": "O-1001"}  # succeeds: the task is wrong
    lines[2] = json.dumps(obj)
    t.write_text("\n".join(lines) + "\n")
    p = _problem(shop_copy)
    assert "marked expect_error but succeeds" in p.message and p.field == "gold_actions.0.expect_error"


def test_task_line_order_does_not_change_outputs(shop_copy, tmp_path):
    from groundeval.worlds.run import run_world

    a = run_world(shop_copy, "padding", tmp_path / "a")
    t = shop_copy / "tasks.jsonl"
    t.write_text("\n".join(reversed(t.read_text().splitlines())) + "\n")
    b = run_world(shop_copy, "padding", tmp_path / "b")
    assert [x.task_id for x in a.traces] == sorted(x.task_id for x in b.traces)
    for name in ("traces.jsonl", "verdicts.jsonl", "report.json", "report.md", "report.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE memory.main.orders SET status = 'x'",  # the initial state: out of reach
        "ATTACH ':memory:' AS other",
        "ROLLBACK",
        "DROP TABLE orders",
        # hidden behind a first statement or a comment: USE memory made the episode's later writes
        # land in the initial state (every later episode saw them)
        "DELETE FROM tickets WHERE ticket_id = $ticket_id; USE memory",
        "-- note\\nUSE memory",
        "/* note */ SET threads = 2",
    ],
)
def test_tool_sql_that_escapes_its_episode_is_refused_at_load(shop_copy, sql):
    m = shop_copy / "world.yaml"
    m.write_text(m.read_text().replace("sql: DELETE FROM tickets WHERE ticket_id = $ticket_id", f'sql: "{sql}"'))
    p = _problem(shop_copy)
    assert p.field == "tools.close_ticket.sql" and "tool" in p.message


def test_python_tool_cannot_escape_and_files_are_out_of_reach(shop):
    from groundeval.worlds.episode import WorldEpisode

    ep = WorldEpisode(shop, shop.task("status-only"))
    h = ep._state.handle
    for sql in ("UPDATE memory.main.orders SET status = 'x'", "COMMIT", "SELECT * FROM lane1.main.orders"):
        with pytest.raises(Exception, match="not allowed|names only"):
            h.query(sql)
    with pytest.raises(Exception, match="disabled"):
        h.query("SELECT * FROM read_csv('/etc/hostname')")
    ep._state._recover()
    assert ep.call("get_order", {"order_id": "O-1001"})["result"]["status"] == "delivered"
    ep.finish()


def test_csv_row_without_a_key_is_located(shop_copy):
    c = shop_copy / "state" / "customers.csv"
    c.write_text(c.read_text() + ",No Key,nokey@example.com\n")
    p = _problem(shop_copy)
    assert p.file.endswith("customers.csv") and p.field == "customer_id" and "no value in a key column" in p.message


def test_tool_sql_that_does_not_bind_is_located_at_the_tool(shop_copy):
    # a table or column that does not exist: found at load, at the tool's SQL line, even when no
    # task's gold action uses the tool (else only an agent's call would ever find it)
    m = shop_copy / "world.yaml"
    text = m.read_text()
    text = text.replace("FROM orders WHERE customer_id = $customer_id", "FROM orderz WHERE customer_id = $customer_id")
    text = text.replace("SET status = 'cancelled' WHERE", "SET statuz = 'cancelled' WHERE")
    m.write_text(text)
    with pytest.raises(ContractError) as exc:
        load_world(shop_copy).close()
    got = {(p.field, p.line) for p in exc.value.problems}
    lines = text.split("\n")
    assert {f for f, _ in got} == {"tools.list_orders.sql", "tools.cancel_order.sql"}
    for _field, line in got:
        assert "orderz" in lines[line - 1] or "statuz" in lines[line - 1]
    assert all(p.file.endswith("world.yaml") for p in exc.value.problems)


def test_every_failing_gold_action_is_located_with_its_task_line(shop_copy):
    t = shop_copy / "tasks.jsonl"
    lines = t.read_text().splitlines()
    for n in (0, 1):  # refund-damaged, cancel-pending: make each gold write fail
        obj = json.loads(lines[n])
        obj["gold_actions"][-1]["arguments"]["order_id"] = "O-1003"
        lines[n] = json.dumps(obj)
    t.write_text("\n".join(lines) + "\n")
    with pytest.raises(ContractError) as exc:
        load_world(shop_copy).close()
    got = sorted((p.line, p.field) for p in exc.value.problems)
    assert got == [(1, "gold_actions.1"), (2, "gold_actions.1")]
    assert all(p.file.endswith("tasks.jsonl") and "fails on the initial state" in p.message for p in exc.value.problems)


def test_python_tool_that_crashes_on_the_gold_replay_is_located(shop_copy):
    tools = shop_copy / "tools.py"
    tools.write_text(tools.read_text().replace("    n = state.one(", "    {}['bug']\n    n = state.one(", 1))
    with pytest.raises(ContractError) as exc:
        load_world(shop_copy).close()
    (p,) = exc.value.problems
    assert p.file.endswith("tasks.jsonl") and p.line == 5 and p.field == "gold_actions.3"
    assert "open_ticket" in p.message and "KeyError" in p.message


def test_python_tools_that_fail_to_import_fail_the_same_way_every_time(shop_copy):
    tools = shop_copy / "tools.py"
    tools.write_text(tools.read_text() + "\nraise RuntimeError('half written')\n")
    for _ in range(2):  # a failed import is not left behind as a module without its functions
        p = _problem(shop_copy)
        assert p.field.startswith("tools.") and "half written" in p.message, p.message


def test_an_edited_tools_py_is_read_again_in_the_same_process(shop_copy):
    from groundeval.worlds.episode import WorldEpisode

    def ticket(world):
        ep = WorldEpisode(world, world.task("ticket-and-refund"))
        try:
            return ep.call("open_ticket", {"order_id": "O-1004", "note": "a"})["result"]
        finally:
            ep.finish()

    w = load_world(shop_copy)
    assert ticket(w) == {"ticket_id": "T-001"}
    w.close()
    tools = shop_copy / "tools.py"
    tools.write_text(tools.read_text().replace('f"T-{n + 1:03d}"', 'f"TK-{n + 1:03d}"'))
    w = load_world(shop_copy)
    assert ticket(w) == {"ticket_id": "TK-001"}  # not the first load's module
    w.close()


def test_a_sql_parameter_that_is_no_argument_is_located(shop_copy):
    # a typo in $name bound NULL on every call: a read that never finds anything, silently
    m = shop_copy / "world.yaml"
    text = m.read_text().replace(
        "WHERE customer_id = $customer_id ORDER BY", "WHERE customer_id = $customerid ORDER BY"
    )
    m.write_text(text)
    p = _problem(shop_copy)
    assert p.field == "tools.list_orders.sql" and "$customerid" in p.message
    assert "$customerid" in text.split("\n")[p.line - 1]


@pytest.mark.parametrize(
    ("remove", "field", "line_text"),
    [
        ("policy.md", "policy", "policy: policy.md"),
        ("state/customers.csv", "tables.customers.source", "customers: {source: state/customers.csv"),
        ("tasks.jsonl", "tasks", "tasks: tasks.jsonl"),
    ],
)
def test_a_missing_file_is_located_at_its_manifest_line(shop_copy, remove, field, line_text):
    (shop_copy / remove).unlink()
    p = _problem(shop_copy)
    assert p.field == field and p.line is not None
    assert (shop_copy / "world.yaml").read_text().split("\n")[p.line - 1].strip().startswith(line_text)


def test_loading_a_world_again_and_again_keeps_no_validators_of_closed_worlds():
    # the tools' schema validators were cached in a module dict holding every ToolDef ever
    # validated: each load of a world grew it for the life of the process
    import gc

    from groundeval.worlds import tools
    from groundeval.worlds.episode import WorldEpisode

    from pathlib import Path

    SHOP = Path(__file__).resolve().parent / "shop"

    def one_load():
        w = load_world(SHOP)
        ep = WorldEpisode(w, w.task("status-only"))
        ep.call("get_order", {"order_id": "O-1003"})
        ep.finish()
        w.close()

    one_load()
    gc.collect()
    before = len(getattr(tools, "_VALIDATORS", {}))
    for _ in range(3):
        one_load()
    gc.collect()
    assert len(getattr(tools, "_VALIDATORS", {})) == before
