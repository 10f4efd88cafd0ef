"""Ranking sees only what the caller sees: BM25's statistics (the number of documents, their
average length, each term's document frequency) are counted over the documents inside the
caller's gates, so two packs that differ only in a document the caller may not see give
byte-identical replies to every call (DESIGN: "Ranking sees only what the caller sees")."""

from __future__ import annotations

import json
import shutil
import tempfile
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runtime_questions import at, make_question

import groundeval.runtime.search_sql as search_sql
from groundeval.runtime.episode import Episode
from groundeval.runtime.search_sql import scope_facts
from groundeval.store.store import Store

# two visible notes of one length: "zebra" in one, "yak" in the other; equal idf makes them
# tie (by id), a gated document holding "zebra" lowered its idf and reversed them before
NOTES = {
    "jira/QA-1": {"title": "note", "timestamp": "2026-03-01T08:00:00Z", "body": "zebra quagga"},
    "jira/QA-2": {"title": "note", "timestamp": "2026-03-01T08:00:00Z", "body": "yak quagga"},
    # a longer note with a rarer word, and a short one with a commoner word: their order
    # follows the average length, which a very long gated document raised before
    "jira/QL-1": {"title": "note", "timestamp": "2026-03-01T08:00:00Z", "body": "aardvark " + "quagga " * 10},
    "slack/QL-3": {"title": "note", "timestamp": "2026-03-02T08:00:00Z", "body": "okapi"},
    "jira/QL-4": {"title": "note", "timestamp": "2026-03-02T08:00:00Z", "body": "okapi quagga"},
}


def write_pack(root: Path, tiny_pack: Path, docs: dict[str, dict]) -> Path:
    pack = root / "pack"
    shutil.copytree(tiny_pack, pack)
    for name, record in docs.items():
        sub, aid = name.split("/")
        (pack / "artifacts" / sub).mkdir(exist_ok=True)
        (pack / "artifacts" / sub / f"{aid}.json").write_text(json.dumps(record) + "\n")
    return pack


def replies(store: Store, question, queries: list[str], subsystems: list[str | None], ids: list[str]) -> str:
    """Every reply an agent gets in a tool episode and a context episode, as one JSON text."""
    out = []
    with Episode(store, question, max_steps=1000) as ep:
        for q in queries:
            for sub in subsystems:
                out.append(ep.search(q, subsystem=sub, limit=20))
        out += [ep.fetch(i) for i in ids]
    with Episode(store, question, mode="context") as ep:
        out.append(ep.context())
    return json.dumps(out, sort_keys=True, ensure_ascii=False)


@pytest.fixture(scope="module")
def base_store(tmp_path_factory, tiny_pack):
    store = Store.open(write_pack(tmp_path_factory.mktemp("base"), tiny_pack, NOTES))
    store.ensure_fts()
    yield store
    store.close()


GATED = {
    # alice (engineer) has no hr; the document is older than the question
    "subsystem": ("hr/QB-9", {"timestamp": "2026-03-01T08:00:00Z"}),
    # in alice's jira, written after the question's moment
    "horizon": ("jira/QB-9", {"timestamp": "2026-03-20T08:00:00Z"}),
    # in alice's slack, restricted to carol
    "actor": ("slack/QB-9", {"timestamp": "2026-03-01T08:00:00Z", "visibility": {"actors": ["carol"]}}),
}


@pytest.mark.parametrize("path", ["python", "sql", "index"])
@pytest.mark.parametrize("gate", sorted(GATED))
@pytest.mark.parametrize("body", ["zebra zebra zebra", "wombat " * 400])
def test_a_gated_document_moves_no_visible_hit(base_store, tiny_pack, tmp_path, monkeypatch, gate, body, path):
    """A gated document sharing a query word (idf) or very long (average length) changes
    nothing alice is told: the two notes still tie, by id, and scores stay as they were. On
    every query path: postings scored in Python or in SQL, or the index tables of a read-only
    store without the companion tables."""
    if path == "sql":
        monkeypatch.setattr(search_sql, "PYTHON_POSTINGS", -1)
    if path == "index":
        monkeypatch.setattr(search_sql, "ensure_search_tables", lambda store: False)
    name, fields = GATED[gate]
    pack = write_pack(tmp_path, tiny_pack, {**NOTES, name: {"title": "note", "body": body, **fields}})
    question = make_question(actor="alice", as_of=at(5))
    queries = ["zebra yak", "aardvark okapi", "quagga", "zebra okapi", "zebra", "wombat yak"]
    subsystems = [None, "jira", "slack"]
    with closing(Store.open(pack)) as store:
        store.ensure_fts()
        meta = search_sql.fetch_index(store).meta["QB-9"]
        scope = scope_facts(store, "alice", at(5), question.gates)
        assert scope.broken("QB-9", meta.subsystem, meta.created_us, meta.restricted) == [gate]
        got = replies(store, question, queries, subsystems, ["QB-9", "QA-1"])
    assert got == replies(base_store, question, queries, subsystems, ["QB-9", "QA-1"])
    first, second = (json.loads(got)[i]["hits"] for i in (0, len(subsystems)))
    assert [h["id"] for h in first] == ["QA-1", "QA-2"]
    assert [h["id"] for h in second] == ["QL-3", "QL-4", "QL-1"]


def test_ungated_search_still_counts_every_document(base_store, tiny_pack, tmp_path):
    """Without gates (a Silence episode) every document is visible, so it does count."""
    pack = write_pack(tmp_path, tiny_pack, {**NOTES, "hr/QB-9": {"title": "note", "body": "zebra zebra zebra"}})
    question = make_question(track="silence", actor=None, as_of=at(5))
    with closing(Store.open(pack)) as store:
        with Episode(store, question) as ep:
            hits = ep.search("zebra yak")["hits"]
    ids = [h["id"] for h in hits]
    assert "QB-9" in ids and ids.index("QA-2") < ids.index("QA-1")


# ---------------------------------------------------------------------------- property

VOCAB = [
    "zebra",
    "yak",
    "quagga",
    "okapi",
    "aardvark",
    "checkout",
    "incident",
    "postmortem",
    "retry",
    "acme",
    "staffing",
    "42",
]
words = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=40).map(" ".join)
CALLERS = ["alice", "bob", "carol", "dave"]


@st.composite
def gated_cases(draw):
    actor = draw(st.sampled_from(CALLERS))
    as_of = at(2) + timedelta(hours=draw(st.integers(0, 24 * 8)))
    track = draw(st.sampled_from(["perspective", "counterfactual"]))
    kinds = ["horizon"] if track == "counterfactual" else ["horizon", "subsystem", "actor"]
    return actor, as_of, track, draw(st.sampled_from(kinds)), draw(words), draw(words)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=gated_cases(), queries=st.lists(words, min_size=1, max_size=4))
def test_packs_differing_in_a_gated_document_reply_alike(base_store, tiny_pack, case, queries):
    actor, as_of, track, kind, title, body = case
    question = make_question(track=track, actor=actor, as_of=as_of)
    scope = scope_facts(base_store, actor, as_of, question.gates)
    subsystems = sorted({"confluence", "hr", "jira", "slack", "zendesk", "zoom"})
    granted = [s for s in subsystems if s in scope.granted]
    created = as_of - timedelta(days=1)
    if kind == "horizon":
        sub, created = (granted or subsystems)[0], as_of + timedelta(minutes=1)
    elif kind == "subsystem":
        ungranted = [s for s in subsystems if s not in scope.granted]
        sub = ungranted[len(body) % len(ungranted)]
    else:
        sub = (granted or subsystems)[0]
    record: dict = {"title": title, "timestamp": created.isoformat(), "actors": ["alice"], "body": body}
    if kind == "actor":
        record["visibility"] = {"actors": ["nobody-else"]}
    calls = (queries + [title, body], [None, *granted[:2]], ["QB-9", "QA-1", "PM-42"])
    with tempfile.TemporaryDirectory() as tmp:
        with closing(Store.open(write_pack(Path(tmp), tiny_pack, {**NOTES, f"{sub}/QB-9": record}))) as store:
            with_doc = scope_facts(store, actor, as_of, question.gates)
            meta = search_sql.fetch_index(store).meta["QB-9"]
            assert with_doc.broken("QB-9", meta.subsystem, meta.created_us, meta.restricted)
            got = replies(store, question, *calls)
    assert got == replies(base_store, question, *calls)


@pytest.mark.parametrize("actor", ["alice", "bob", "carol", "dave", None])
@pytest.mark.parametrize("day", [1, 3, 5, 9, 12])
def test_python_and_sql_scoring_rank_alike(base_store, monkeypatch, actor, day):
    """The two plans of the companion tables give the same rows, with and without a subsystem."""
    question = make_question(track="perspective" if actor else "silence", actor=actor, as_of=at(day))
    scope = scope_facts(base_store, actor, at(day), question.gates)
    queries = [
        "zebra yak",
        "aardvark okapi quagga",
        "checkout incident 42",
        "note",
        "INC-42 postmortem retry loop",
        "staffing confidential",
    ]
    calls = [(q, sub) for q in queries for sub in [None, "jira", "slack", "hr"]]
    want = [search_sql.search_rows(base_store, scope, q, sub, 20) for q, sub in calls]
    monkeypatch.setattr(search_sql, "PYTHON_POSTINGS", -1)
    assert [search_sql.search_rows(base_store, scope, q, sub, 20) for q, sub in calls] == want
    assert want == [search_sql._ranked_index_tables(base_store, scope, q, sub, 20) for q, sub in calls]
    # all see a hit, but dave after he left and carol before her one document was written
    assert any(want) == (not (actor == "dave" and day > 7) and not (actor == "carol" and day < 8))
