"""The class of bug behind issue 31 item 1, as a property of the MCP hub: for random
interleavings of start / prompt / call / submit / end by N clients — all looking alike (no
token, as on a loopback server) or each with its own token — every client's calls land in
an episode it started, every start makes a new episode, and every episode ends as exactly
one trace (none lost, none shared), with one trial per (question, trial)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_questions import at, make_question

from groundeval.runtime.mcp_server import UNKNOWN_EPISODE, EpisodeHub, HubError

QUESTIONS = [
    make_question(actor="alice", as_of=at(5), qid="q-a"),
    make_question(actor="carol", as_of=at(9), qid="q-b"),
]
ANSWER = {"could_actor_have_known": True}

step = st.tuples(
    st.integers(0, 3),  # which client
    st.sampled_from(["start", "prompt", "call", "call", "submit", "end", "foreign"]),
    st.integers(0, 7),  # which of its episodes / which question
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n_clients=st.integers(2, 4),
    own_tokens=st.booleans(),
    steps=st.lists(step, min_size=1, max_size=30),
)
def test_every_call_lands_in_the_callers_own_episode(tiny_store, n_clients, own_tokens, steps):
    hub = EpisodeHub(tiny_store, QUESTIONS, idle_timeout=None)
    owner = (lambda c: f"token-{c}") if own_tokens else (lambda c: None)
    mine: dict[int, list[str]] = {c: [] for c in range(n_clients)}  # open episodes, as each client knows them
    expected: dict[str, tuple[str, str, list[str]]] = {}  # episode -> (agent, question, queries it was sent)
    ended: list[str] = []
    n = 0
    for client, action, k in steps:
        client %= n_clients
        agent = f"c{client}"
        if action in ("start", "prompt"):
            try:
                if action == "start":
                    qid = QUESTIONS[k % len(QUESTIONS)].id
                    got = hub.call("start_episode", {"question_id": qid, "agent": agent}, owner(client))
                else:
                    got = hub.start_next(agent=agent, owner=owner(client))
            except HubError as exc:  # the prompt when every question is busy or answered
                assert action == "prompt" and "every question" in str(exc)
                continue
            eid = got["episode_id"]
            assert eid not in expected  # a new episode, never one already handed out
            expected[eid] = (agent, got["question_id"], [])
            mine[client].append(eid)
        elif action == "foreign":  # naming another client's episode
            others = [e for c, es in mine.items() if c != client for e in es]
            if not others:
                continue
            eid = others[k % len(others)]
            query = f"foreign-{n}"
            n += 1
            if own_tokens:  # another caller's episode: the reply for an id that does not exist
                with pytest.raises(HubError) as err:
                    hub.call("search_artifacts", {"episode_id": eid, "query": query}, owner(client))
                assert str(err.value) == UNKNOWN_EPISODE
            else:  # no token: whoever holds the id holds the episode (here, it was handed over)
                hub.call("search_artifacts", {"episode_id": eid, "query": query}, owner(client))
                expected[eid][2].append(query)
        elif mine[client]:
            eid = mine[client][k % len(mine[client])]
            if action == "call":
                query = f"{agent}-{n}"
                n += 1
                reply = hub.call("search_artifacts", {"episode_id": eid, "query": query}, owner(client))
                assert reply["status"] == "ok"
                expected[eid][2].append(query)
            else:
                if action == "submit":
                    hub.call("submit_answer", {"episode_id": eid, "answer": ANSWER}, owner(client))
                else:
                    hub.call("end_episode", {"episode_id": eid}, owner(client))
                for es in mine.values():
                    if eid in es:
                        es.remove(eid)
                ended.append(eid)
                with pytest.raises(HubError):  # over: nobody can use it again
                    hub.call("search_artifacts", {"episode_id": eid, "query": "late"}, owner(client))
    assert hub.open_episodes == sum(len(es) for es in mine.values())
    hub.close()
    traces = hub.finished
    # every episode started is exactly one trace, holding exactly the calls sent to it
    want = Counter((agent, qid, tuple(queries)) for agent, qid, queries in expected.values())
    got = Counter(
        (t.agent, t.question_id, tuple(c.arguments.get("query") for c in t.calls if c.tool == "search_artifacts"))
        for t in traces
    )
    assert got == want
    assert len({(t.question_id, t.trial) for t in traces}) == len(traces)
    for t in traces:
        assert sorted(x.trial for x in traces if x.question_id == t.question_id) == list(
            range(sum(x.question_id == t.question_id for x in traces))
        )
