"""Property tests: the runtime's fast gate decisions equal the visibility cone's SQL."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from runtime_questions import make_question

from groundeval.runtime.episode import REFUSAL, Episode
from groundeval.runtime.search_sql import fetch_index, scope_facts
from groundeval.store.cone import GATES, gate_flags

ACTORS = ["alice", "bob", "carol", "dave", "pagerbot", "ghost", None]
IDS = ["HR-1", "JIRA-42", "JIRA-43", "PM-41", "PM-42", "ZD-7", "dm-bob-alice", "slack-inc-42", "zoom-0302", "nope"]
WORDS = [
    "checkout",
    "incident",
    "INC-42",
    "postmortem",
    "staffing",
    "retry",
    "loop",
    "login",
    "acme",
    "hr",
    "confidential",
    "escalated",
    "42",
    "43",
    "the",
    "bob",
    "cache",
    "payment",
]
START = datetime(2026, 2, 28, tzinfo=timezone.utc)

moments = st.integers(0, 12 * 24 * 4).map(lambda q: START + timedelta(minutes=15 * q))
gate_sets = st.lists(st.sampled_from(GATES), unique=True)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(actor=st.sampled_from(ACTORS), as_of=moments, gates=gate_sets)
def test_runtime_scope_flags_equal_cone(tiny_store, actor, as_of, gates):
    scope = scope_facts(tiny_store, actor, as_of, gates)
    meta = fetch_index(tiny_store).meta
    expected = gate_flags(tiny_store, actor, as_of, IDS, gates)
    got = {
        aid: (
            None
            if aid not in meta
            else scope.broken(aid, meta[aid].subsystem, meta[aid].created_us, meta[aid].restricted)
        )
        for aid in IDS
    }
    assert got == expected


@SETTINGS
@given(actor=st.sampled_from(ACTORS), as_of=moments, gates=gate_sets, artifact=st.sampled_from(IDS))
def test_runtime_gated_fetch_never_returns_content(tiny_store, actor, as_of, gates, artifact):
    q = make_question(actor=actor, as_of=as_of, gates=gates)
    with Episode(tiny_store, q) as ep:
        reply = ep.fetch(artifact)
    call = ep.trace.calls[0]
    expected = gate_flags(tiny_store, actor, as_of, [artifact], gates)[artifact]
    if expected is None:
        assert call.status == "not_found"
        assert reply == {"status": "not_found", "error": REFUSAL}
    elif expected:
        assert call.status == "denied" and call.flags == expected and call.result_ids == []
        assert reply == {"status": "not_found", "error": REFUSAL}  # uniform refusal: existence not revealed
        body = tiny_store.artifact_record(artifact).get("body", "")
        assert body not in json.dumps(reply)
    else:
        assert call.status == "ok" and call.flags == [] and reply["artifact"]["id"] == artifact
        assert all(e["time"] <= as_of.isoformat().replace("+00:00", "Z") for e in reply["events"])


@pytest.mark.slow
@SETTINGS
@given(
    actor=st.sampled_from(ACTORS),
    as_of=moments,
    gates=gate_sets,
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    subsystem=st.sampled_from([None, "jira", "slack", "hr", "zoom", "confluence", "zendesk"]),
)
# found in CI: a horizon gate hides a document, the visible ones rank in another order
@example(
    actor="alice",
    as_of=START + timedelta(minutes=15 * 136),
    gates=["horizon"],
    words=["checkout", "42"],
    subsystem=None,
)
def test_runtime_search_hits_inside_gates(tiny_store, actor, as_of, gates, words, subsystem):
    q = make_question(actor=actor, as_of=as_of, gates=gates)
    with Episode(tiny_store, q) as ep:
        reply = ep.search(" ".join(words), subsystem=subsystem, limit=20)
    call = ep.trace.calls[0]
    ids = [h["id"] for h in reply["hits"]]
    assert call.result_ids == ids
    assert all(f == [] for f in gate_flags(tiny_store, actor, as_of, ids, gates).values())
    if subsystem is not None:
        assert all(h["subsystem"] == subsystem for h in reply["hits"])
    if call.flags:
        assert call.flags == ["subsystem"] and ids == [] and "subsystem" in gates
    # the filter drops only gated artifacts: an ungated search's visible hits are all here. Their
    # order may differ: ranking statistics are counted over what the caller may see (issue 31
    # item 2), so a gated document no longer shifts the scores of the visible ones
    with Episode(tiny_store, make_question(actor=actor, as_of=as_of, gates=[])) as open_ep:
        everything = [h["id"] for h in open_ep.search(" ".join(words), subsystem=subsystem, limit=20)["hits"]]
    if not call.flags:
        visible = [i for i in everything if gate_flags(tiny_store, actor, as_of, [i], gates)[i] == []]
        assert sorted(ids) == sorted(visible)
