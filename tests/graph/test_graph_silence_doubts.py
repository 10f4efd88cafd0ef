"""An absence is verified only if nothing in its window or expected search space could be the
response (issue 30, item 3).

The shape the other tests did not build: a trigger without its joined response, beside an
event of the response type that lacks the join key, or carries the trigger's key only in its
text, inside the window or (outside it) with its document in the expected search space. Built
on the original-format facilities pack (``tests/contract/legacy_packs.py``): its one absence is
the repair of HD-2 (event e08, 2026-04-06 12:00, a 5-day gap), its search space the HD-2 ticket,
the chat message of e08 and the wiki pages matching "review HD-2".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from groundeval import verifier
from groundeval.graph.build import build_graph, doubtful_absences, key_text
from groundeval.questions.generate import generate
from groundeval.store.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "contract"))
from legacy_packs import write_pack  # noqa: E402

SPEC = "repair_done->review_written"


def pack_with(root: Path, event: dict | None, docs: dict[str, str]) -> Path:
    """The facilities pack plus one ``review_written`` event and wiki pages (id -> text)."""
    write_pack(root)
    if event is not None:
        line = {"type": "review_written", "actors": ["max"], "facts": {}, **event}
        with (root / "events.jsonl").open("a") as fh:
            fh.write(json.dumps(line) + "\n")
    for aid, text in docs.items():
        (root / "artifacts" / "wiki" / f"{aid}.json").write_text(
            json.dumps({"id": aid, "timestamp": "2026-04-07T09:00:00", "title": aid, "body": text})
        )
    return root


CASES = {
    # in the window, no helpdesk key: nothing says which repair it reviews
    "no_key_in_window": (
        {"id": "e13", "timestamp": "2026-04-07T09:00:00", "artifact_ids": {"wiki": "WK-3"}},
        {"WK-3": "Heating checked."},
        ("response_without_join_key", "e13"),
    ),
    # in the window, joins HD-9, but its page is about HD-2
    "key_only_in_text": (
        {"id": "e13", "timestamp": "2026-04-07T09:00:00", "artifact_ids": {"helpdesk": "HD-9", "wiki": "WK-3"}},
        {"WK-3": "Follow-up on hd-2: boiler pressure."},
        ("response_mentions_key", "e13"),
    ),
    # in the window, names HD-2 in a fact of its own (not the join path)
    "key_in_a_fact": (
        {
            "id": "e13",
            "timestamp": "2026-04-07T09:00:00",
            "artifact_ids": {"helpdesk": "HD-9"},
            "facts": {"note": "see HD-2"},
        },
        {},
        ("response_mentions_key", "e13"),
    ),
    # long after the window, no key, but its page is what the selector "review HD-2" finds
    "no_key_in_search_space": (
        {"id": "e13", "timestamp": "2026-05-20T09:00:00", "artifact_ids": {"wiki": "WK-3"}},
        {"WK-3": "Review HD-2 boiler, late."},
        ("response_without_join_key", "e13"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_possible_response_makes_the_absence_ambiguous(tmp_path, case):
    event, docs, expected = CASES[case]
    store = Store.open(pack_with(tmp_path / "p", event, docs))
    try:
        g = build_graph(store)
        assert [r.trigger_event_id for r in g.absences if r.spec == SPEC] == ["e08"]
        doubts = doubtful_absences(store, g.absences, g.events)
        assert doubts == {(SPEC, "e08"): expected}
        qs = generate(store)
    finally:
        store.close()
    assert qs.metadata.skipped["silence"][expected[0]] == 1
    assert not [q for q in qs.questions if q.track == "silence" and q.ground_truth.trigger_event_id == "e08"]


@pytest.mark.parametrize(
    ("event", "docs"),
    [
        # another repair's review in the window: its key (HD-1) says whose it is
        ({"id": "e13", "timestamp": "2026-04-07T09:00:00", "artifact_ids": {"helpdesk": "HD-1"}}, {}),
        # a keyless review only after the window, its page not in the search space
        ({"id": "e13", "timestamp": "2026-05-20T09:00:00", "artifact_ids": {"wiki": "WK-3"}}, {"WK-3": "Boiler."}),
        # HD-2 in the window's text only as part of a longer id (HD-21)
        (
            {"id": "e13", "timestamp": "2026-04-07T09:00:00", "artifact_ids": {"helpdesk": "HD-9", "wiki": "WK-3"}},
            {"WK-3": "Follow-up on HD-21."},
        ),
    ],
)
def test_a_response_that_is_someone_elses_leaves_the_absence_verified(tmp_path, event, docs):
    store = Store.open(pack_with(tmp_path / "p", event, docs))
    try:
        g = build_graph(store)
        assert doubtful_absences(store, g.absences, g.events) == {}
        qs = generate(store)
    finally:
        store.close()
    assert [
        q.ground_truth.trigger_event_id for q in qs.questions if q.track == "silence" and q.bucket == "absence"
    ] == ["e08"]


def test_the_verifier_reports_the_set_aside_absences(tmp_path):
    event, docs, _ = CASES["no_key_in_window"]
    result = verifier.verify(pack_with(tmp_path / "p", event, docs), level=4)
    (f,) = result.by_rule("GE410")
    assert f.severity == "warning" and "response_without_join_key 1" in f.message


def test_key_text_is_the_normalised_token_run():
    assert key_text("INC-42") == " inc 42 "
    assert key_text("  Ops/ Review__7 ") == " ops review 7 "
    assert key_text("42") == ""  # too short to look for in a text


# --------------------------------------------------------------------------- original selectors (item 4)


def _space_of(root: Path, trigger: str) -> tuple[str, ...]:
    store = Store.open(root)
    try:
        g = build_graph(store)
        (rec,) = [r for r in g.absences + g.presences if r.trigger_event_id == trigger]
        return rec.expected_search_space
    finally:
        store.close()


def test_an_original_query_template_is_a_case_insensitive_phrase(tmp_path):
    """ "review {artifact_ids.helpdesk}" for HD-2: BM25 over any word would take every review
    (WK-1, WK-2: "Review HD-1 lift", "Review HD-3 leak"); the original's phrase takes the pages
    holding "review hd-2" in any case, and nothing else."""
    docs = {"WK-4": "Quick REVIEW hd-2: boiler.", "WK-5": "review  HD-2 (two spaces)", "WK-6": "preview HD-2x"}
    root = pack_with(tmp_path / "p", None, docs)
    # "preview HD-2x" holds the phrase as a substring, as the original's regex search finds it
    assert _space_of(root, "e08") == ("CH-2", "HD-2", "WK-4", "WK-6")


def test_the_phrase_hits_are_the_first_limit_by_id(tmp_path):
    docs = {f"WK-{n}": f"review HD-2, take {n}" for n in (9, 3, 7, 5, 8, 4)}
    root = pack_with(tmp_path / "p", None, docs)
    assert _space_of(root, "e08") == ("CH-2", "HD-2", "WK-3", "WK-4", "WK-5", "WK-7", "WK-8")  # limit 5


def test_a_native_query_template_still_ranks_by_bm25(tmp_path, tiny_pack):
    """Only the original format's selectors are phrases: a native one keeps BM25 (tiny's
    "postmortem {facts.incident_id}" ranks the other incidents' postmortems in)."""
    store = Store.open(tiny_pack)
    try:
        g = build_graph(store)
        (rec,) = g.absences
    finally:
        store.close()
    assert {"PM-41", "PM-42"} <= set(rec.expected_search_space)
