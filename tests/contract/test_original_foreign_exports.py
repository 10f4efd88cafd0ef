"""Original-format packs exported as real systems export them load by default (issue 30, item 1).

Shapes the other tests do not build: an ``artifact_ids`` key that is no subsystem (a join key
kept beside the artifact references), references to artifacts the export lacks (dangling), and
integer ids (``"id": 1000``, ``{"jira": 1001}``), as the original generator accepts them.
"""

from __future__ import annotations

import json
import shutil

import pytest

from groundeval import api, verifier
from groundeval.cli.main import main
from groundeval.errors import ContractError
from groundeval.questions.generate import generate
from groundeval.store.store import Store
from legacy_packs import write_pack


def _edit_events(root, edit) -> None:
    path = root / "events.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    for n, ev in enumerate(events):
        edit(n, ev)
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def foreign_pack(root):
    """The facilities pack with a join key beside every helpdesk reference (``key``: an incident
    number naming no artifact), one dangling chat reference, and event e06 renamed to the integer
    1000 with an integer reference to the helpdesk ticket 1001 (which exists, with an integer id)."""
    write_pack(root)

    def edit(n, ev):
        refs = ev["artifact_ids"]
        if "helpdesk" in refs:
            refs["key"] = refs["helpdesk"].replace("HD", "INC")
        if ev["id"] == "e04":
            refs["chat"] = "CH-GONE"
        if ev["id"] == "e06":
            ev["id"] = 1000
            refs["helpdesk"] = [refs["helpdesk"], 1001]

    _edit_events(root, edit)
    (root / "artifacts" / "helpdesk" / "1001.json").write_text(
        json.dumps({"id": 1001, "timestamp": "2026-04-05T08:00:00", "title": "Boiler log", "body": "Pressure low."})
    )
    return root


def test_a_foreign_original_export_opens_without_force(tmp_path):
    root = foreign_pack(tmp_path / "orig")
    store = api.open_pack(root)  # raises on a verifier error: none may remain
    try:
        assert store.query("SELECT id FROM events WHERE id = '1000'") == [("1000",)]
        links = store.query("SELECT key, artifact_id FROM event_artifacts WHERE event_id = '1000' ORDER BY ALL")
        assert links == [("helpdesk", "1001"), ("helpdesk", "HD-2"), ("key", "INC-2")]
        assert store.query("SELECT id, subsystem FROM artifacts WHERE id = '1001'") == [("1001", "helpdesk")]
        qs = generate(store)
    finally:
        store.close()
    assert {q.track for q in qs.questions} == {"perspective", "counterfactual", "silence"}


def test_dangling_references_and_join_keys_are_counted_not_errors(tmp_path):
    root = foreign_pack(tmp_path / "orig")
    result = verifier.verify(root, level=3)
    assert result.errors == []
    found = {f.path: f for f in result.by_rule("GE205")}
    assert set(found) == {"$.artifact_ids.chat", "$.artifact_ids.key"}
    chat, key = found["$.artifact_ids.chat"], found["$.artifact_ids.key"]
    assert chat.severity == "warning" and "1 reference(s) to 1 artifact(s)" in chat.message
    assert "'CH-GONE'" in chat.message and chat.record == "e04" and chat.line == 4
    # eleven events reference a helpdesk ticket and carry its key: three incident numbers, none an artifact
    assert key.severity == "info" and "3 of its value(s) (11 reference(s)" in key.message


def test_info_counts_dangling_references_and_identifiers(tmp_path, capsys):
    root = foreign_pack(tmp_path / "orig")
    store = api.open_pack(root)
    try:
        total = store.query("SELECT count(*) FROM event_artifacts")[0][0]
    finally:
        store.close()
    main(["info", str(root), "--json"])
    refs = json.loads(capsys.readouterr().out)["references"]
    assert refs["dangling"] == 1 and refs["identifiers"] == 11  # CH-GONE; the eleven keys
    assert refs["resolved"] == total - 12 > 0
    main(["info", str(root)])
    assert "1 dangling" in " ".join(capsys.readouterr().out.split())


def test_a_native_pack_still_refuses_a_missing_artifact(tmp_path, tiny_pack):
    """The native format keeps GE205 an error: only the original's exports are taken as they are."""
    root = tmp_path / "native"
    shutil.copytree(tiny_pack, root)
    _edit_events(root, lambda n, ev: ev["artifact_ids"].update(file="NOPE-1") if n == 0 else None)
    result = verifier.verify(root, level=2)
    assert [(f.severity, f.record) for f in result.by_rule("GE205")] == [("error", "e1")]


@pytest.mark.parametrize(
    ("first", "second", "needle"),
    [
        (1000, "1000", "an integer id and a string id of the same digits name one event"),
        ("1000", 1000, "an integer id and a string id of the same digits name one event"),
    ],
)
def test_integer_and_string_ids_of_the_same_digits_collide(tmp_path, first, second, needle):
    root = write_pack(tmp_path / "orig")

    def edit(n, ev):
        if n == 0:
            ev["id"] = first
        if n == 5:
            ev["id"] = second

    _edit_events(root, edit)
    with pytest.raises(ContractError) as err:
        Store.open(root)
    (problem,) = err.value.problems
    assert problem.line == 6 and problem.field == "id"
    assert 'duplicate event id "1000" (first at line 1)' in problem.message and needle in problem.message


def test_an_integer_artifact_id_colliding_with_a_string_one_is_located(tmp_path):
    root = write_pack(tmp_path / "orig")
    (root / "artifacts" / "wiki" / "x.json").write_text(json.dumps({"id": 7, "timestamp": "2026-04-01", "t": "a"}))
    (root / "artifacts" / "wiki" / "y.json").write_text(json.dumps({"id": "7", "timestamp": "2026-04-01", "t": "b"}))
    with pytest.raises(ContractError) as err:
        Store.open(root)
    messages = [p.message for p in err.value.problems]
    assert any('duplicate artifact id "7"' in m and "same digits name one artifact" in m for m in messages)


@pytest.mark.parametrize(("value", "kind"), [(1.5, "double"), (True, "boolean"), (10**20, "double")])
def test_ids_other_than_strings_and_64_bit_integers_are_refused(tmp_path, value, kind):
    root = write_pack(tmp_path / "orig")
    _edit_events(root, lambda n, ev: ev.update(id=value) if n == 2 else None)
    with pytest.raises(ContractError) as err:
        Store.open(root)
    (problem,) = err.value.problems
    assert problem.line == 3 and problem.message == f"expected a string or an integer, got {kind}"


def test_integer_references_join_string_ones(tmp_path):
    """``{"helpdesk": 1001}`` and ``{"helpdesk": "1001"}`` name one artifact and join (the
    original compared them as Python values and would not join them: groundeval reads ids as text)."""
    root = write_pack(tmp_path / "orig")

    def edit(n, ev):
        if ev["id"] == "e06":
            ev["artifact_ids"]["helpdesk"] = 1001
        if ev["id"] == "e07":
            ev["artifact_ids"]["helpdesk"] = "1001"

    _edit_events(root, edit)
    (root / "artifacts" / "helpdesk" / "1001.json").write_text(
        json.dumps({"timestamp": "2026-04-05T08:00:00", "title": "Boiler", "body": "low"})
    )
    from groundeval.graph.build import build_graph

    store = Store.open(root)
    try:
        edges = {(e.cause_event_id, e.effect_event_id) for e in build_graph(store).causal_edges}
    finally:
        store.close()
    assert ("e06", "e07") in edges
