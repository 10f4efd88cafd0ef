"""Episode behaviour on the tiny pack: gates per call, statuses, submissions, budgets, modes."""

from __future__ import annotations

import json

import pytest
from runtime_questions import at, make_question

from groundeval.runtime.episode import REFUSAL, Episode
from groundeval.store.cone import gate_flags


def run(store, question, calls, mode="tool", **kw):
    with Episode(store, question, mode, **kw) as ep:
        replies = [ep.call(tool, args) for tool, args in calls]
    return replies, ep.trace


@pytest.mark.parametrize(
    "actor, day, hour, gates, artifact, flags",
    [
        ("carol", 9, 12, None, "JIRA-42", ["subsystem"]),  # hr_ops cannot read jira
        ("carol", 9, 12, None, "HR-1", []),  # restricted to carol
        ("alice", 9, 12, None, "HR-1", ["subsystem", "actor"]),
        ("dave", 5, 12, None, "dm-bob-alice", ["actor"]),  # support reads slack, but the DM is restricted
        ("alice", 2, 12, None, "PM-42", ["horizon"]),  # written on March 4th
        ("dave", 2, 12, None, "JIRA-42", []),  # broadcast: support hears incident_opened
        ("dave", 5, 8, None, "JIRA-43", ["horizon", "subsystem"]),  # before e6 made it visible
        ("dave", 8, 12, None, "ZD-7", ["subsystem"]),  # dave left on March 7th
        ("bob", 3, 12, None, "zoom-0302", ["subsystem"]),  # engineer until March 4th
        ("bob", 5, 12, None, "zoom-0302", []),  # manager afterwards
        ("carol", 5, 12, ["horizon"], "JIRA-42", []),  # counterfactual: time only
        ("carol", 5, 12, ["horizon"], "PM-41", ["horizon"]),
    ],
)
def test_runtime_fetch_gates(tiny_store, actor, day, hour, gates, artifact, flags):
    q = make_question(actor=actor, as_of=at(day, hour), gates=gates)
    (reply,), trace = run(tiny_store, q, [("fetch_artifact", {"artifact_id": artifact})])
    call = trace.calls[0]
    assert call.flags == flags
    assert flags == gate_flags(tiny_store, actor, q.as_of, [artifact], q.gates)[artifact]
    if flags:
        assert reply == {"status": "not_found", "error": REFUSAL}  # the same reply as an unknown id
        assert call.status == "denied" and call.result_ids == []
    else:
        assert reply["status"] == "ok" and reply["artifact"]["id"] == artifact
        assert call.result_ids == [artifact]


def test_runtime_fetch_returns_events_up_to_as_of(tiny_store):
    early = run(tiny_store, make_question(actor="alice", as_of=at(2)), [("fetch_artifact", {"artifact_id": "JIRA-42"})])
    late = run(tiny_store, make_question(actor="alice", as_of=at(5)), [("fetch_artifact", {"artifact_id": "JIRA-42"})])
    assert [e["id"] for e in early[0][0]["events"]] == ["e1"]
    # e4 (the resolution) references the ticket too, but the ticket was written before it:
    # an immutable document records only the events at or before its creation
    assert [e["id"] for e in late[0][0]["events"]] == ["e1"]
    note = run(
        tiny_store,
        make_question(actor="alice", as_of=at(5)),
        [("fetch_artifact", {"artifact_id": "slack-inc-42-resolved"})],
    )
    ev = note[0][0]["events"][0]
    assert ev == {"id": "e4", "type": "incident_resolved", "time": "2026-03-03T11:00:00Z", "actors": ["alice"]}
    art = late[0][0]["artifact"]
    assert art["subsystem"] == "jira" and art["created"] == "2026-03-01T09:05:00Z" and "retry loop" in art["body"]


def test_runtime_search_stays_inside_gates(tiny_store):
    q = make_question(actor="alice", as_of=at(3, 12))
    replies, trace = run(tiny_store, q, [("search_artifacts", {"query": "INC-42 checkout postmortem staffing"})])
    hits = replies[0]["hits"]
    ids = [h["id"] for h in hits]
    assert ids and trace.calls[0].result_ids == ids
    assert "PM-42" not in ids and "HR-1" not in ids and "zoom-0302" not in ids
    assert all(f == [] for f in gate_flags(tiny_store, "alice", q.as_of, ids).values())
    assert set(hits[0]) == {"id", "subsystem", "title", "created", "actors", "snippet"}
    assert all(len(h["snippet"]) <= 170 for h in hits)


def test_runtime_search_subsystem_filter_and_denial(tiny_store):
    q = make_question(actor="alice", as_of=at(9))
    replies, trace = run(
        tiny_store,
        q,
        [
            ("search_artifacts", {"query": "INC-42", "subsystem": "jira"}),
            ("search_artifacts", {"query": "INC-42", "subsystem": "zoom"}),
            ("search_artifacts", {"query": "INC-42", "subsystem": "no-such-system"}),
        ],
    )
    assert {h["subsystem"] for h in replies[0]["hits"]} == {"jira"}
    assert replies[1]["hits"] == [] and replies[1]["status"] == "denied"
    assert trace.calls[1].flags == ["subsystem"]
    assert trace.calls[2].status == "invalid" and trace.calls[2].flags == []
    # without the subsystem gate naming zoom is fine
    replies, trace = run(
        tiny_store,
        make_question("counterfactual", actor="alice", as_of=at(9)),
        [("search_artifacts", {"query": "staffing", "subsystem": "zoom"})],
    )
    assert [h["id"] for h in replies[0]["hits"]] == ["zoom-0302"] and trace.calls[0].flags == []


def test_runtime_search_limit(tiny_store):
    q = make_question("silence", actor=None, as_of=at(10))
    replies, trace = run(
        tiny_store,
        q,
        [
            ("search_artifacts", {"query": "INC-42", "limit": 2}),
            ("search_artifacts", {"query": "INC-42", "limit": 500}),
            ("search_artifacts", {"query": "INC-42", "limit": 0}),
            ("search_artifacts", {"query": "INC-42", "limit": "5"}),
            ("search_artifacts", {"query": "INC-42", "limit": True}),
        ],
    )
    assert len(replies[0]["hits"]) == 2
    assert len(replies[1]["hits"]) == 8  # every artifact mentioning 42, capped only at 20
    assert [c.status for c in trace.calls] == ["ok", "ok", "invalid", "invalid", "invalid"]


BAD_CALLS = [
    ("search_artifacts", {"query": ""}, "invalid"),
    ("search_artifacts", {"query": "   "}, "invalid"),
    ("search_artifacts", {"query": "x" * 1_000_000}, "invalid"),
    ("search_artifacts", {"query": 42}, "invalid"),
    ("search_artifacts", {"query": ["a"]}, "invalid"),
    ("search_artifacts", {"query": "a\x00b"}, "invalid"),
    ("search_artifacts", {}, "invalid"),
    ("search_artifacts", {"query": "x", "bogus": 1}, "invalid"),
    ("search_artifacts", {"query": "x", "subsystem": 3}, "invalid"),
    ("search_artifacts", {"query": "'; DROP TABLE artifacts; --"}, "ok"),
    ("search_artifacts", {"query": "\" OR 1=1 -- ünïcødé 🙂 ' \\"}, "ok"),
    ("fetch_artifact", {"artifact_id": "../../etc/passwd"}, "not_found"),
    ("fetch_artifact", {"artifact_id": "/etc/passwd"}, "not_found"),
    ("fetch_artifact", {"artifact_id": "JIRA-42' OR '1'='1"}, "not_found"),
    ("fetch_artifact", {"artifact_id": "y" * 1_000_000}, "not_found"),
    ("fetch_artifact", {"artifact_id": ""}, "invalid"),
    ("fetch_artifact", {"artifact_id": None}, "invalid"),
    ("fetch_artifact", {"artifact_id": {"id": "JIRA-42"}}, "invalid"),
    ("fetch_artifact", "JIRA-42", "invalid"),
    ("delete_everything", {}, "invalid"),
    (None, {}, "invalid"),
    (["fetch_artifact"], {}, "invalid"),
    ("submit_answer", {"answer": float("nan")}, "invalid"),
    ("submit_answer", {"answer": {"could_actor_have_known": "x" * 1_000_000}}, "invalid"),
]


def test_runtime_bad_input_is_recorded_never_raised(tiny_store):
    before = tiny_store.query("SELECT count(*) FROM artifacts")[0][0]
    q = make_question(actor="alice", as_of=at(9))
    replies, trace = run(tiny_store, q, [(t, a) for t, a, _ in BAD_CALLS], max_steps=100)
    assert [c.status for c in trace.calls] == [s for _, _, s in BAD_CALLS]
    assert all(r["status"] == s for r, (_, _, s) in zip(replies, BAD_CALLS))
    assert all(not c.flags for c in trace.calls)
    assert tiny_store.query("SELECT count(*) FROM artifacts")[0][0] == before
    line = trace.model_dump_json()
    assert len(line) < 100_000  # 1 MB arguments are recorded truncated
    assert trace.calls[2].arguments["query"].endswith("[truncated 998000 chars]")
    json.loads(line)


def test_runtime_submit_validation_and_citations(tiny_store):
    q = make_question(actor="carol", as_of=at(9))
    replies, trace = run(
        tiny_store,
        q,
        [
            ("submit_answer", {"answer": {"could_actor_have_known": "yes"}}),
            ("submit_answer", {"answer": {"could_actor_have_known": False, "extra": 1}}),
            (
                "submit_answer",
                {
                    "answer": {
                        "could_actor_have_known": False,
                        "evidence_artifacts": ["JIRA-42", "HR-1", "nope", "PM-41"],
                    }
                },
            ),
            ("fetch_artifact", {"artifact_id": "HR-1"}),
        ],
    )
    assert [r["status"] for r in replies] == ["invalid", "invalid", "ok", "invalid"]
    assert "is not of type 'boolean'" in replies[0]["errors"][0]
    assert [s.valid for s in trace.submissions] == [False, False, True]
    assert trace.submissions[0].errors and trace.submissions[0].call_index == 0
    assert trace.submissions[2].citation_flags == {
        "HR-1": [],
        "JIRA-42": ["subsystem"],
        "PM-41": ["subsystem"],
        "nope": None,
    }
    assert trace.final_answer["could_actor_have_known"] is False
    assert trace.status == "completed" and trace.calls[3].status == "invalid"


def test_runtime_citations_without_actor_check_time_only(tiny_store):
    q = make_question("silence", actor=None, as_of=at(5))
    _, trace = run(
        tiny_store,
        q,
        [
            (
                "submit_answer",
                {"answer": {"could_actor_have_known": True, "evidence_artifacts": ["PM-41", "HR-1", "PM-42"]}},
            )
        ],
    )
    assert trace.submissions[0].citation_flags == {"HR-1": ["horizon"], "PM-41": ["horizon"], "PM-42": []}


def test_runtime_step_budget(tiny_store):
    q = make_question(actor="alice", as_of=at(9))
    with Episode(tiny_store, q, max_steps=3) as ep:
        for _ in range(5):
            ep.fetch("JIRA-42")
        assert ep.done and ep.steps_left == 0
        assert ep.submit({"could_actor_have_known": True})["status"] == "invalid"
    assert len(ep.trace.calls) == 3 and ep.trace.status == "step_budget" and ep.trace.final_answer is None
    assert len(ep.trace.timings.call_latency_ms) == 3


def test_runtime_no_answer_and_timings(tiny_store):
    with Episode(tiny_store, make_question(), agent="me") as ep:
        ep.search("checkout")
        assert not ep.done and ep.steps_left == 29
    t = ep.trace
    assert t.status == "no_answer" and t.agent == "me" and t.mode == "tool"
    assert t.contract_digest == tiny_store.digest
    assert t.timings.total_ms is not None and t.timings.ended >= t.timings.started
    assert "latency" not in json.dumps(t.model_dump(mode="json")["calls"])


def test_runtime_public_question_hides_truth(tiny_store):
    q = make_question(actor="carol", as_of=at(9))
    with Episode(tiny_store, q) as ep:
        pub = json.dumps(ep.public_question())
    assert "ground_truth" not in pub and "target_event_id" not in pub and "expected_search_space" not in pub
    assert json.loads(pub)["answer_schema"] == q.answer_schema


def test_runtime_zero_shot_allows_only_submit(tiny_store):
    replies, trace = run(
        tiny_store,
        make_question(),
        [
            ("search_artifacts", {"query": "checkout"}),
            ("fetch_artifact", {"artifact_id": "JIRA-42"}),
            ("submit_answer", {"answer": {"could_actor_have_known": True}}),
        ],
        mode="zero-shot",
    )
    assert [c.status for c in trace.calls] == ["invalid", "invalid", "ok"]
    assert trace.context_ids == [] and trace.mode == "zero-shot"


def test_runtime_context_window(tiny_store):
    q = make_question(actor="alice", as_of=at(5, 12))
    with Episode(tiny_store, q, "context") as ep:
        window = ep.context()
        assert ep.search("checkout")["status"] == "invalid"
    ids = ep.trace.context_ids
    assert ids == [w["artifact"]["id"] for w in window]
    # newest first, inside the gates
    assert ids == ["JIRA-43", "PM-42", "slack-inc-42-resolved", "dm-bob-alice", "slack-inc-42", "JIRA-42"]
    created = [w["artifact"]["created"] for w in window]
    assert created == sorted(created, reverse=True)
    assert all(f == [] for f in gate_flags(tiny_store, "alice", q.as_of, ids).values())
    # a smaller budget keeps the newest prefix
    with Episode(tiny_store, q, "context", context_budget_chars=400) as small:
        assert small.trace.context_ids == ids[: len(small.trace.context_ids)] and 0 < len(small.trace.context_ids) < 5
    # deterministic
    with Episode(tiny_store, q, "context") as again:
        assert again.trace.context_ids == ids


def test_runtime_silence_context_uses_context_subsystems(tiny_store):
    q = make_question("silence", actor=None, as_of=at(7, 12), context_subsystems=["confluence", "jira"])
    with Episode(tiny_store, q, "context") as ep:
        pass
    assert ep.trace.context_ids == ["JIRA-43", "PM-42", "JIRA-42"]  # PM-41 is written later


def test_note_records_the_calls_made_before_it(tiny_store):
    """Reports interleave narration and calls by ``at_call`` (the calls recorded before the note)."""
    with Episode(tiny_store, make_question()) as ep:
        ep.note("looking")
        ep.search("checkout")
        ep.fetch("JIRA-42")
        ep.note({"role": "assistant", "content": "found it"})
        ep.note({"role": "assistant", "content": "kept", "at_call": 1})
    assert [m["at_call"] for m in ep.trace.messages] == [0, 2, 1]
    assert ep.trace.messages[0] == {"role": "assistant", "content": "looking", "at_call": 0}
