"""The opt-in response cache (issue 32 item 6): content-addressed by the request (never the key),
2xx answers only; a replay makes no network call and gives byte-identical traces — the retries the
original needed included."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_agents_adapters import oa_reply, question

from groundeval.agents.cache import ResponseCache
from groundeval.agents.openai_chat import openai_agent
from groundeval.agents.runner import run_episode
from groundeval.cli.main import main
from groundeval.store.store import Store
from groundeval.trace.io import trace_line
from groundeval.trace.model import Timings

ANSWER = {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}


@pytest.fixture(scope="module")
def store(tiny_pack):
    s = Store.open(tiny_pack)
    yield s
    s.close()


def _script(server) -> None:
    server.add(
        (429, {"Retry-After": "0"}, {"error": {"message": "slow down"}}),
        oa_reply([("fetch_artifact", json.dumps({"artifact_id": "JIRA-42"}))]),
        oa_reply([("submit_answer", json.dumps({"answer": ANSWER}))]),
    )


def _bytes(trace) -> str:
    return trace_line(trace.model_copy(update={"timings": Timings()}))


def test_a_replay_makes_no_request_and_gives_the_same_trace(scripted_server, store, tmp_path):
    cache = tmp_path / "cache"
    _script(scripted_server)
    live = run_episode(store, question(), openai_agent("m", base_url=scripted_server.url, cache=str(cache), backoff=0))
    assert live.status == "completed" and len(scripted_server.requests) == 3  # the 429, then two answers
    assert live.usage.get("retries") == 1
    assert len(list(cache.glob("*/*.json"))) == 2  # the 2xx answers; the 429 was not kept
    scripted_server.requests.clear()  # the script is exhausted: any request now gets HTTP 500
    agent = openai_agent("m", base_url=scripted_server.url, api_key="another-key", cache=str(cache), retries=0)
    replay = run_episode(store, question(), agent)
    assert scripted_server.requests == []
    assert _bytes(replay) == _bytes(live)  # retries included: the original's, from the cache


def test_another_request_is_a_miss_and_no_cache_writes_nothing(scripted_server, store, tmp_path):
    cache = tmp_path / "cache"
    _script(scripted_server)
    run_episode(store, question(), openai_agent("m", base_url=scripted_server.url, cache=str(cache), backoff=0))
    scripted_server.requests.clear()
    scripted_server.add(oa_reply([("submit_answer", json.dumps({"answer": ANSWER}))]))
    other = run_episode(store, question(), openai_agent("m2", base_url=scripted_server.url, cache=str(cache)))
    assert other.status == "completed" and len(scripted_server.requests) == 1  # another model: sent
    scripted_server.add(oa_reply([("submit_answer", json.dumps({"answer": ANSWER}))]))
    run_episode(store, question(), openai_agent("m3", base_url=scripted_server.url))
    assert len(list(cache.glob("*/*.json"))) == 3  # m3 ran without the cache: nothing added


def test_a_damaged_entry_is_a_miss_and_is_written_again(tmp_path):
    cache = ResponseCache(tmp_path)
    key = cache.key("http://x/v1", "chat/completions", {"model": "m"})
    cache.put(key, {"choices": []}, {"attempts": 1, "retries": 0})
    (file,) = tmp_path.glob("*/*.json")
    file.write_text('{"body": ')
    assert cache.get(key) is None and cache.misses == 1
    cache.put(key, {"choices": [1]}, {"attempts": 1, "retries": 0})
    assert cache.get(key) == ({"choices": [1]}, {"attempts": 1, "retries": 0})
    cache.put(key, {"x": float("nan")}, {"attempts": 1, "retries": 0})  # not canonical JSON: not kept
    assert cache.get(key) == ({"choices": [1]}, {"attempts": 1, "retries": 0})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(max_size=4), json_values, max_size=5))
def test_the_key_is_the_request_not_its_key_order(payload):
    cache = ResponseCache("unused")
    reordered = dict(reversed(list(payload.items())))
    assert cache.key("http://h/v1/", "/chat/completions", payload) == cache.key(
        "http://h/v1", "chat/completions", reordered
    )
    assert cache.key("http://h/v1", "chat/completions", payload) != cache.key(
        "http://other/v1", "chat/completions", payload
    )


def test_run_with_cache_replays_byte_identical_traces(scripted_server, tmp_path, capsys):
    replies = [oa_reply([("submit_answer", json.dumps({"answer": {"exists": False}}))]) for _ in range(2)]
    scripted_server.add(*replies)
    runs = []
    for name in ("live", "replay"):
        out = tmp_path / name
        args = ["run", "tiny", "--agent", "openai:m", "--base-url", scripted_server.url, "--retries", "0"]
        args += ["--cache", str(tmp_path / "cache"), "--out", str(out), "-q", "--track", "silence"]
        try:
            main(args)
        except SystemExit as exc:
            assert not exc.code
        traces = [json.loads(x) for x in (out / "traces.jsonl").read_text().splitlines()]
        runs.append([{k: v for k, v in t.items() if k != "timings"} for t in traces])
        assert json.loads((out / "run.json").read_text())["agent"]["settings"]["cache"] == str(tmp_path / "cache")
    assert len(scripted_server.requests) == 2  # the live run's two questions; the replay sent nothing
    assert runs[0] == runs[1] and all(t["status"] == "completed" for t in runs[0])
