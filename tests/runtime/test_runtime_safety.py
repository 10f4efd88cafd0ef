"""Issue 13 at the Python API: nothing an agent sends crashes a run, loses a call or
reveals what is gated (real tiny store, real files)."""

from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_questions import at, make_question

from groundeval.errors import ContractError
from groundeval.runtime import episode as episode_module
from groundeval.runtime.episode import INTERNAL_ERROR, REFUSAL, STORE_ERROR, Episode
from groundeval.runtime.mcp_server import UNKNOWN_EPISODE, EpisodeHub, HubError, TraceNotWritten
from groundeval.runtime.search_sql import fetch_index, term_index
from groundeval.store.cone import gate_flags
from groundeval.store.store import Store
from groundeval.trace.io import append_trace, read_traces, trace_line
from groundeval.trace.text import escape, escape_all, has_surrogate, surrogate_paths, unescape

# ----------------------------------------------------------------------------- 1. lone surrogates


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xFFFF)))
def test_escape_is_lossless_and_always_utf8(text):
    out = escape(text)
    out.encode("utf-8")  # never raises
    assert unescape(out) == text if has_surrogate(text) else out == text


def test_surrogate_paths_name_nested_strings_and_keys():
    value = {"b": ["ok", {"c\ud800": 1}], "a": "x\udfff", "z": "fine"}
    assert surrogate_paths(value) == ["$.a", "$.b[1].c\\ud800(key)"]
    assert surrogate_paths(["\ud800"] * 50, limit=3) == ["$[0]", "$[1]", "$[2]"]
    assert escape_all(value) == {"b": ["ok", {"c\\ud800": 1}], "a": "x\\udfff", "z": "fine"}


def test_lone_surrogates_are_recorded_escaped_never_raised(tiny_store, tmp_path):
    q = make_question(actor="alice", as_of=at(9))
    with Episode(tiny_store, q, agent="agent\ud800") as ep:
        replies = [
            ep.search("x \ud800"),
            ep.search("checkout", subsystem="jira\udc00"),
            ep.fetch("PM-42\ud800"),
            ep.call("fetch_artifact\ud800", {}),
            ep.call("search_artifacts", {"qu\ud800ery": "x"}),
            ep.call("fetch_artifact", '{"artifact_id": "\ud800"}'),
            ep.submit({"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42\\\udc00"]}),
            ep.submit({"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}),
        ]
        ep.note("narration \ud800")
    trace = ep.trace
    assert [c.status for c in trace.calls] == ["invalid"] * 7 + ["ok"]
    assert all(r["status"] == "invalid" for r in replies[:7]) and replies[7] == {"status": "ok", "accepted": True}
    assert "lone surrogate" in replies[0]["error"] and "$.query" in replies[0]["error"]
    # recorded losslessly: the escaped strings unescape to exactly what the agent sent
    assert unescape(trace.calls[0].arguments["query"]) == "x \ud800"
    assert unescape(trace.calls[2].arguments["artifact_id"]) == "PM-42\ud800"
    assert trace.calls[3].tool == "fetch_artifact\\ud800"
    first = trace.submissions[0]
    assert first.valid is False and "$.evidence_artifacts[0]" in first.errors[0]
    assert unescape(first.answer["evidence_artifacts"][0]) == "JIRA-42\\\udc00"
    assert trace.final_answer == {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}
    assert trace.agent == "agent\\ud800" and trace.messages[0]["content"] == "narration \\ud800"
    # the trace writes and reads back (nothing reached DuckDB)
    path = tmp_path / "traces.jsonl"
    append_trace(path, trace)
    (back,) = read_traces(path)
    assert trace_line(back) == trace_line(trace)


def test_trace_writer_escapes_what_slipped_through(tmp_path):
    """Defence in depth: a surrogate put into a trace by hand still cannot fail the write."""
    q = make_question(actor="alice", as_of=at(9))
    from groundeval.trace.model import Trace

    trace = Trace(
        question_id=q.id,
        track=q.track,
        mode="tool",
        actor="alice",
        as_of=q.as_of,
        contract_digest="d",
        messages=[{"role": "runner", "error": "boom \ud800"}],
    )
    line = trace_line(trace)
    assert "boom \\\\ud800" in line
    append_trace(tmp_path / "t.jsonl", trace)
    assert read_traces(tmp_path / "t.jsonl")[0].messages[0]["error"] == "boom \\ud800"


def test_surrogate_traces_are_deterministic(tiny_store):
    q = make_question(actor="alice", as_of=at(9))

    def one():
        with Episode(tiny_store, q, agent="a") as ep:
            ep.search("x \ud800 \\ud800")
            ep.fetch("\udfffPM")
        data = json.loads(trace_line(ep.trace))
        data.pop("timings")
        return json.dumps(data, sort_keys=True)

    assert one() == one()


# ----------------------------------------------------------------------------- 2. bounded caches, internal errors


def test_stem_cache_is_a_bounded_lru_that_never_fails(tiny_store, monkeypatch):
    idx = term_index(tiny_store)
    monkeypatch.setattr(idx, "MAX_MEMO", 8)
    q = make_question("silence", actor=None, as_of=at(10))
    with Episode(tiny_store, q, max_steps=100) as ep:
        want = ep.search("postmortem")["hits"]
        # 30 unseen words push "postmortem" out of an 8-word memo; the old cache raised KeyError here
        words = " ".join(f"zz{i}q" for i in range(30))
        again = ep.search(f"{words} postmortem")
        assert again["status"] == "ok" and again["hits"] == want
        assert ep.search("postmortem")["hits"] == want
    assert len(idx._stems) <= 8
    assert all(c.status == "ok" for c in ep.trace.calls)


def test_stem_cache_survives_100k_distinct_words_from_many_threads(tiny_store):
    idx = term_index(tiny_store)
    q = make_question("silence", actor=None, as_of=at(10))
    expected = None
    with Episode(tiny_store, q) as ep:
        expected = ep.search("postmortem INC-42")["hits"]
    failures: list = []
    n_threads, per_query = 4, 100
    total = idx.MAX_MEMO + 2_000  # past the memo's size: eviction happens, nothing fails

    def worker(t: int) -> None:
        start = t * (total // n_threads)
        for base in range(start, start + total // n_threads, per_query):
            words = " ".join(f"v{t}{i:x}" for i in range(base, base + per_query))  # < 1000 characters
            with Episode(tiny_store, q) as ep:
                r = ep.search(f"{words} postmortem INC-42")
            if r.get("status") != "ok" or r["hits"] != expected:
                failures.append(r)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []
    assert len(idx._stems) <= idx.MAX_MEMO


def test_internal_error_is_recorded_and_the_agent_learns_nothing(tiny_store, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("postmortem")

    monkeypatch.setattr(episode_module, "search_rows", broken)  # fault injection: an engine bug
    q = make_question(actor="alice", as_of=at(9))
    with Episode(tiny_store, q) as ep:
        reply = ep.search("postmortem")
        ok = ep.fetch("JIRA-43")
    assert reply == {"status": "error", "error": INTERNAL_ERROR}
    assert "postmortem" not in json.dumps(reply)
    call = ep.trace.calls[0]
    assert call.status == "error" and call.error == "internal error: KeyError: 'postmortem'"
    assert ok["status"] == "ok"  # one failing call does not end the episode


def test_store_error_is_generic_to_the_agent(tiny_pack):
    store = Store.open(tiny_pack)
    q = make_question(actor="alice", as_of=at(9))
    ep = Episode(store, q)
    fetch_index(store)
    store.close()  # the store fails under the episode
    reply = ep.search("checkout")
    assert reply == {"status": "error", "error": STORE_ERROR}
    assert ep.trace.calls[0].status == "error" and ep.trace.calls[0].error.startswith("store error:")


def test_answer_nested_thousands_deep_is_an_invalid_submission(tiny_store):
    deep: object = True
    for _ in range(3000):
        deep = [deep]
    q = make_question(actor="alice", as_of=at(9))
    with Episode(tiny_store, q) as ep:
        reply = ep.submit({"could_actor_have_known": deep})
        reply2 = ep.call("submit_answer", {"answer": deep})
    assert reply["status"] == reply2["status"] == "invalid"
    assert "deeper than" in ep.trace.submissions[0].errors[0]
    trace_line(ep.trace)  # writes


# ----------------------------------------------------------------------------- 9. uniform refusal


@pytest.mark.parametrize(
    "track, actor, gates, gated",
    [
        ("perspective", "carol", None, "JIRA-42"),  # subsystem gate
        ("perspective", "alice", None, "HR-1"),  # actor + subsystem
        ("perspective", "alice", None, "PM-41"),  # written after the as-of
        ("counterfactual", "alice", None, "PM-41"),  # horizon only
        ("silence", None, ["horizon"], "PM-41"),  # a Silence question with a horizon
    ],
)
def test_gated_and_unknown_ids_get_identical_replies(tiny_store, track, actor, gates, gated):
    q = make_question(track, actor=actor, as_of=at(5), gates=gates)
    assert gate_flags(tiny_store, actor, q.as_of, [gated], q.gates)[gated]  # really gated
    with Episode(tiny_store, q) as ep:
        a = ep.fetch(gated)
        b = ep.fetch("PM-999")
        c = ep.fetch(gated.lower() + "-nope")
    assert a == b == c == {"status": "not_found", "error": REFUSAL}
    assert [x.status for x in ep.trace.calls] == ["denied", "not_found", "not_found"]
    assert ep.trace.calls[0].flags and not ep.trace.calls[1].flags


def test_uniform_refusal_on_generated_questions_of_every_track(tiny_store):
    from groundeval.questions.generate import generate

    qs = generate(tiny_store).questions
    ids = sorted(fetch_index(tiny_store).meta)
    seen_tracks = set()
    for q in qs:
        flags = gate_flags(tiny_store, q.actor, q.as_of, ids, q.gates)
        gated = [a for a in ids if flags[a]]
        with Episode(tiny_store, q) as ep:
            unknown = ep.fetch("no-such-artifact-0")
            for aid in gated:
                assert ep.fetch(aid) == unknown == {"status": "not_found", "error": REFUSAL}
        seen_tracks.add(q.track)
    assert seen_tracks == {"perspective", "counterfactual", "silence"}


# ----------------------------------------------------------------------------- 3, 4, 8. the hub


def test_hub_refuses_an_unwritable_traces_path_at_start(tiny_store, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ContractError, match="traces cannot be written"):
        EpisodeHub(tiny_store, [make_question(qid="q1")], traces=blocker / "traces.jsonl")
    with pytest.raises(ContractError, match="traces cannot be written"):
        EpisodeHub(tiny_store, [make_question(qid="q1")], traces=tmp_path)  # a folder


def test_hub_reports_a_trace_it_cannot_write_and_the_client_is_told(tiny_store, tmp_path):
    path = tmp_path / "traces.jsonl"
    told: list[str] = []
    hub = EpisodeHub(tiny_store, [make_question(qid="q1")], traces=path, report=told.append)
    eid = hub.call("start_episode", {"question_id": "q1"})["episode_id"]
    path.unlink()
    path.mkdir()  # the traces file is gone and cannot be recreated
    with pytest.raises(TraceNotWritten, match="NOT recorded"):
        hub.call("submit_answer", {"episode_id": eid, "answer": {"could_actor_have_known": True}})
    assert len(hub.unwritten) == 1 and hub.unwritten[0].status == "completed"
    assert told and "could not write the trace of question 'q1'" in told[0]


def test_hub_binds_episodes_to_their_session(tiny_store):
    hub = EpisodeHub(tiny_store, [make_question(qid="q1")])
    eid = hub.call("start_episode", {"question_id": "q1"}, owner="A")["episode_id"]
    for tool, args in [
        ("fetch_artifact", {"artifact_id": "JIRA-42"}),
        ("get_context", {}),
        ("end_episode", {}),
        ("submit_answer", {"answer": {"could_actor_have_known": True}}),
    ]:
        with pytest.raises(HubError) as err:
            hub.call(tool, {"episode_id": eid, **args}, owner="B")
        assert str(err.value) == UNKNOWN_EPISODE
        with pytest.raises(HubError) as unknown:
            hub.call(tool, {"episode_id": "0" * 32, **args}, owner="B")
        assert str(unknown.value) == str(err.value)  # the same reply as an id that does not exist
    assert hub.call("fetch_artifact", {"episode_id": eid, "artifact_id": "JIRA-42"}, owner="A")["status"] == "ok"
    assert hub.open_episodes == 1


def test_idle_episodes_expire_as_abandoned(tiny_store, tmp_path):
    path = tmp_path / "traces.jsonl"
    hub = EpisodeHub(tiny_store, [make_question(qid="q1"), make_question(qid="q2")], traces=path, idle_timeout=0.3)
    idle = hub.call("start_episode", {"question_id": "q1"})["episode_id"]
    busy = hub.call("start_episode", {"question_id": "q2"})["episode_id"]
    hub.call("search_artifacts", {"episode_id": idle, "query": "checkout"})
    for _ in range(4):
        time.sleep(0.1)
        hub.call("search_artifacts", {"episode_id": busy, "query": "checkout"})
    hub.expire_idle()  # calls sweep too: by now the idle episode has ended either way
    (trace,) = read_traces(path)
    assert trace.question_id == "q1" and trace.status == "abandoned" and len(trace.calls) == 1
    with pytest.raises(HubError, match="unknown or finished"):
        hub.call("search_artifacts", {"episode_id": idle, "query": "checkout"})
    assert hub.open_episodes == 1


def test_hub_caps_open_episodes(tiny_store):
    hub = EpisodeHub(tiny_store, [make_question(qid="q1")], max_open=3)
    for i in range(3):  # three episodes open (whoever starts them)
        hub.call("start_episode", {"question_id": "q1", "agent": f"a{i}"})
    with pytest.raises(HubError, match="too many open episodes"):
        hub.call("start_episode", {"question_id": "q1", "agent": "a3"})


def test_testing_strategies_use_the_runtime_wording():
    from groundeval.runtime import episode
    from groundeval.testing import strategies

    assert strategies.REFUSAL == episode.REFUSAL and strategies.SUBSYSTEM_REFUSAL == episode.SUBSYSTEM_REFUSAL
