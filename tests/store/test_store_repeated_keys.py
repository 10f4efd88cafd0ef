"""An event whose ``artifact_ids`` repeats a key (JSON with duplicate keys): ``event_artifacts``
holds every pair — as DuckDB's MAP reading (and so ``artifact_text``) keeps them — in one
total order (event, key, place in its list, id), so the table's rows, which reach outputs,
cannot come out in either order."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.store.store import Store

MANIFEST = "name: repeated\ntimezone: UTC\nsources:\n  events: events.jsonl\n  artifacts: artifacts.jsonl\n"
KEYS = st.sampled_from(["a", "b", "c"])
IDS = st.sampled_from(["A", "B", "C"])
PAIRS = st.lists(st.tuples(KEYS, IDS | st.none() | st.lists(IDS, max_size=3)), max_size=6)


def _event(eid: str, pairs: list[tuple[str, object]]) -> str:
    ids = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs) + "}"
    return f'{{"id": "{eid}", "type": "t", "timestamp": "2024-01-01T00:00:00Z", "artifact_ids": {ids}}}'


def _write(folder, events: list[str]) -> None:
    folder.mkdir()
    (folder / "groundeval.yaml").write_text(MANIFEST)
    (folder / "events.jsonl").write_text("\n".join(events) + "\n")
    (folder / "artifacts.jsonl").write_text('{"id": "A", "subsystem": "jira", "timestamp": "2024-01-01T00:00:00Z"}\n')


def _expected(events: dict[str, list[tuple[str, object]]]) -> list[tuple]:
    """Every pair, sorted by event, key, the id's place in its list, the id."""
    rows = []
    for eid, pairs in events.items():
        for key, value in pairs:
            if isinstance(value, str):
                rows.append((eid, key, 0, value))
            elif isinstance(value, list):
                rows += [(eid, key, pos, v) for pos, v in enumerate(value)]
    return sorted(rows)


def test_repeated_key_keeps_every_pair_in_one_order(tmp_path):
    pairs = [("b", ["x", "y"]), ("a", "1"), ("b", ["z"]), ("a", "2"), ("a", "0")]
    _write(tmp_path / "p", [_event("e1", pairs)])
    store = Store.open(tmp_path / "p")
    rows = store.query("SELECT * FROM event_artifacts")
    assert rows == [
        ("e1", "a", 0, "0"),
        ("e1", "a", 0, "1"),
        ("e1", "a", 0, "2"),
        ("e1", "b", 0, "x"),
        ("e1", "b", 0, "z"),
        ("e1", "b", 1, "y"),
    ]


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(PAIRS, min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_event_artifacts_rows_are_every_pair_in_one_order(tmp_path_factory, maps, rnd: random.Random):
    events = {f"e{i}": pairs for i, pairs in enumerate(maps)}
    lines = [_event(eid, pairs) for eid, pairs in events.items()]
    rnd.shuffle(lines)  # file order does not reach the table
    folder = tmp_path_factory.mktemp("pack") / "p"
    _write(folder, lines)
    store = Store.open(folder)
    assert store.query("SELECT * FROM event_artifacts") == _expected(events)
