"""A world trace records what the agent sent the same way every run: an object JSON cannot hold
is kept as its repr without the memory address CPython prints, a set as its members in a fixed
order (its own order follows the hash seed), in the call's arguments and in what the agent said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from groundeval.worlds.episode import run_episode

SCRIPT = """
import json, sys
from groundeval.worlds import load_world
from groundeval.worlds.episode import run_episode

class Odd:
    name = "odd"

    def run(self, episode):
        episode.call("get_order", {"order_id": "O-1001", "extra": object(), "tags": {"b", "a", "c", "d"}})
        episode.say(object())

w = load_world(sys.argv[1])
print(json.dumps(run_episode(w, w.task("refund-damaged"), Odd()).model_dump(mode="json"), sort_keys=True))
"""

SHOP = Path(__file__).resolve().parent / "shop"


class Odd:
    name = "odd"

    def run(self, episode):
        episode.call("get_order", {"order_id": "O-1001", "extra": object(), "tags": {"b", "a", "c"}})
        episode.say(object())


def test_objects_and_sets_are_recorded_without_addresses_or_hash_order(shop):
    tr = run_episode(shop, shop.task("refund-damaged"), Odd())
    args = tr.calls[0].arguments
    assert args["extra"] == "<object object>" and args["tags"] == ["a", "b", "c"]
    assert [m.text for m in tr.messages if m.role == "assistant"] == ["<object object>"]
    again = run_episode(shop, shop.task("refund-damaged"), Odd())
    assert again.model_dump(mode="json") == tr.model_dump(mode="json")  # other objects, other addresses


def test_the_trace_is_the_same_bytes_under_other_hash_seeds():
    outs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        got = subprocess.run([sys.executable, "-c", SCRIPT, str(SHOP)], capture_output=True, text=True, env=env)
        assert got.returncode == 0, got.stderr
        trace = json.loads(got.stdout)
        assert trace["calls"][0]["arguments"]["tags"] == ["a", "b", "c", "d"]
        outs.add(got.stdout)
    assert len(outs) == 1
