"""The episode's changes, kept by key from what writes return, always equal the changes the
database holds (compared in full), whatever the writes do: key moves, deletes, upserts, their
own RETURNING lists, statements that fail half-way (hypothesis)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.worlds import load_world
from groundeval.worlds.episode import WorldEpisode
from groundeval.worlds.verdict import replay_writes

MANIFEST = """kind: world
version: 1
name: grid
policy: policy.md
tables:
  t: {source: t.jsonl, key: [k]}
  u: {source: u.jsonl, key: [a, b]}
tools:
  run_sql:
    kind: write
    arguments: {statements: {type: array, required: true, items: {type: string}}}
    python: tools:run_sql
  peek:
    kind: read
    arguments: {k: {type: integer, required: true}}
    sql: SELECT * FROM t WHERE k = $k
tasks: tasks.jsonl
"""

TOOLS = """
def run_sql(state, statements):
    n = 0
    for s in statements:
        n += state.execute(s)
    return {"rows": n}
"""


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    d = tmp_path_factory.mktemp("grid")
    (d / "world.yaml").write_text(MANIFEST)
    (d / "policy.md").write_text("Anything goes.\n")
    (d / "tools.py").write_text(TOOLS)
    (d / "t.jsonl").write_text("".join(json.dumps({"k": k, "v": k * 10, "s": f"s{k}"}) + "\n" for k in range(12)))
    (d / "u.jsonl").write_text(
        "".join(json.dumps({"a": a, "b": b, "w": a * b}) + "\n" for a in range(3) for b in range(3))
    )
    task = {"id": "x", "user": {"opening": "hi"}, "gold_actions": [{"tool": "peek", "arguments": {"k": 1}}]}
    (d / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    w = load_world(d)
    yield w
    w.close()


K = st.integers(0, 15)
_stmt = st.one_of(
    st.builds(
        lambda a, m, r: f"UPDATE t SET v = v + {a} WHERE k % {m} = {r}",
        st.integers(1, 3),
        st.integers(2, 4),
        st.integers(0, 1),
    ),
    st.builds(lambda x, d: f"UPDATE t SET k = k + {d} WHERE k = {x}", K, st.integers(1, 20)),
    st.builds(lambda x: f"DELETE FROM t WHERE k = {x}", K),
    st.builds(lambda x, y: f"INSERT INTO t VALUES ({x}, {y}, 'n{y}')", K, st.integers(0, 99)),
    st.builds(lambda x, y: f"INSERT OR REPLACE INTO t VALUES ({x}, {y}, 'r{y}')", K, st.integers(0, 99)),
    st.builds(lambda x, y: f"UPDATE t SET s = 'q{y}' WHERE k = {x} RETURNING v", K, st.integers(0, 9)),
    st.builds(lambda x: f"WITH z AS (SELECT {x} AS kk) UPDATE t SET v = 0 WHERE k IN (SELECT kk FROM z)", K),
    st.builds(lambda a, b: f"UPDATE u SET w = w + 1 WHERE a = {a} OR b = {b}", st.integers(0, 3), st.integers(0, 3)),
    st.builds(lambda a, b: f"UPDATE u SET a = a + 3 WHERE a = {a} AND b = {b}", st.integers(0, 3), st.integers(0, 3)),
    st.builds(lambda a, b: f"DELETE FROM u WHERE a = {a} AND b = {b}", st.integers(0, 5), st.integers(0, 3)),
    st.just("SELECT CAST('x' AS INTEGER)"),  # a statement that fails: the call is undone
)


_CALLS = st.lists(st.lists(_stmt, min_size=1, max_size=3), min_size=1, max_size=6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=_CALLS)
def test_changes_by_key_equal_the_database(grid, calls):
    _check(grid, calls)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=_CALLS)
def test_changes_by_key_equal_the_database_many(grid, calls):
    _check(grid, calls)


def _check(grid, calls):
    ep = WorldEpisode(grid, grid.task("x"))
    state = ep._state
    for statements in calls:
        before = state.changes()
        out = ep.call("run_sql", {"statements": statements})
        assert state.changes() == state._query_changes()
        if not out["ok"]:
            assert state.changes() == before  # a failed call changed nothing
    trace = ep.finish()
    assert replay_writes(grid, trace.calls)[0] == trace.final_digest
