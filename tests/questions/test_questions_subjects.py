"""Subject references against a brute-force reading of the words, on awkward logs.

The logs here have the shapes real exports have and our packs do not: list-valued
facts, ids only in ``artifact_ids``, many same-type events in one minute, several
actors per event, actors sharing a display name, event types that read the same
(``ticket_closed`` / ``ticket-closed``), bookkeeping-only facts.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.contract.paths import join_key
from groundeval.graph.sql import GraphSQL
from groundeval.questions.subjects import Role, Subject, SubjectIndex, _levels
from groundeval.questions.text import humanize
from groundeval.store.store import Store

BASE = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
TYPES = ["ticket_closed", "ticket-closed", "alert"]
DISPLAY = {"u1": "Ada", "u2": "Ben", "u3": "Ada"}  # two actors read the same


@st.composite
def logs(draw):
    n = draw(st.integers(2, 16))
    arts = [f"DOC-{i}" for i in range(draw(st.integers(1, 5)))]
    events = []
    for i in range(n):
        facts = {}
        if draw(st.booleans()):
            facts["flow"] = "support"
        if draw(st.booleans()):
            facts["step"] = draw(st.sampled_from([1, "1", 2, 2.0]))
        if draw(st.booleans()):
            facts["tags"] = draw(st.lists(st.sampled_from(["p1", "vip", 1]), max_size=2))
        refs: dict = {}
        if draw(st.booleans()):
            refs["jira"] = draw(st.sampled_from(arts))
        if draw(st.booleans()):
            refs["slack"] = draw(st.lists(st.sampled_from(arts), min_size=1, max_size=2, unique=True))
        minute = draw(st.sampled_from([0, 0, 1, 60 * 24, 60 * 24 + 1, 2 * 60 * 24]))
        second = draw(st.sampled_from([0, 0, 30]))
        events.append(
            {
                "id": f"e{i:02d}",
                "type": draw(st.sampled_from(TYPES)),
                "timestamp": (BASE + timedelta(minutes=minute, seconds=second)).isoformat().replace("+00:00", "Z"),
                "actors": draw(st.lists(st.sampled_from(sorted(DISPLAY)), max_size=3, unique=True)),
                "artifact_ids": refs,
                "facts": facts,
            }
        )
    return events, arts


def _write(root: Path, events, arts) -> Path:
    manifest = {
        "name": "subjects",
        "access": {
            "actors": {a: {"role": "r", "display_name": name} for a, name in DISPLAY.items()},
            "roles": {"r": {"subsystems": ["docs"]}},
        },
    }
    (root / "groundeval.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    (root / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    (root / "artifacts.jsonl").write_text(
        "".join(
            json.dumps({"id": a, "subsystem": "docs", "timestamp": BASE.isoformat(), "title": a}) + "\n" for a in arts
        ),
        encoding="utf-8",
    )
    text = (root / "groundeval.yaml").read_text(encoding="utf-8")
    (root / "groundeval.yaml").write_text(
        text + "sources: {events: events.jsonl, artifacts: artifacts.jsonl}\n", encoding="utf-8"
    )
    return root


def _words_match(shown: dict, e: dict, display: dict[str, str] = DISPLAY) -> bool:
    """Does event ``e`` fit the words a reference shows? (read independently of subjects.py)"""
    if humanize(e["type"]) != humanize(shown["type"]):
        return False
    for kind, key, value in shown["ids"]:
        block = e.get("facts" if kind == "f" else "artifact_ids") or {}
        if value not in join_key(block.get(key)):
            return False
    names = {display.get(a, a) for a in e.get("actors", [])}
    if not set(shown["actors"]) <= names:
        return False
    if shown["time"]:
        size = {"day": timedelta(days=1), "minute": timedelta(minutes=1), "second": timedelta(seconds=1)}
        ts = datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00"))
        subject_ts = datetime.fromtimestamp(shown["ts_us"] / 1e6, tz=timezone.utc)
        start = {
            "day": subject_ts.replace(hour=0, minute=0, second=0, microsecond=0),
            "minute": subject_ts.replace(second=0, microsecond=0),
            "second": subject_ts.replace(microsecond=0),
        }[shown["time"]]
        if not start <= ts < start + size[shown["time"]]:
            return False
    return True


def _brute_count(ref, events) -> int:
    shown = {**ref.shown(), "ts_us": ref.ts_us}
    return sum(_words_match(shown, e) for e in events)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=logs(), time=st.booleans(), actors=st.booleans(), hide_jira=st.booleans())
def test_references_name_exactly_one_event(tmp_path_factory, data, time, actors, hide_jira):
    events, arts = data
    store = Store.open(_write(tmp_path_factory.mktemp("log"), events, arts))
    gs = GraphSQL(store.cursor)
    role = Role(time=time, actors=actors, hide=frozenset({("a", "jira")}) if hide_jira else frozenset())
    subjects = {
        e["id"]: Subject(
            e["id"],
            e["type"],
            int(datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp() * 1_000_000),
            e,
            tuple(e["actors"]),
        )
        for e in events
    }
    index = SubjectIndex(gs, DISPLAY)
    requests = [(k, s, role) for k, s in subjects.items()]
    found = index.resolve(requests)
    orders = index.levels(requests)
    for key, s in subjects.items():
        levels = orders[key]
        # every allowed identifier is tried, except one that all events of the type show
        tried = set(levels[-1].ids)
        same_type = [e for e in events if humanize(e["type"]) == humanize(s.type)]
        for kind, k, v in set(_levels(s, role, DISPLAY)[-1].ids) - tried:
            assert all(
                v in join_key((e.get("facts" if kind == "f" else "artifact_ids") or {}).get(k)) for e in same_type
            )
        counts = [_brute_count(ref, events) for ref in levels]
        assert all(c >= 1 for c in counts), "a subject always fits its own words"
        expected = next((ref for ref, c in zip(levels, counts) if c == 1), None)
        assert found[key] == expected
        if expected is not None:
            assert ("jira" not in [k for _, k, _ in expected.ids]) or not hide_jira
            assert f"'{humanize(s.type)}' event" in expected.text()
            assert not expected.time or time
            # list-valued facts are never shown
            assert "tags" not in [k for _, k, _ in expected.ids]


# ----------------------------------------------------------------------------- whole question sets


def _question_sets(tmp_path_factory):
    from groundeval.questions.generate import generate
    from groundeval.synth.generate import write_org

    packs = [
        p
        for p in sorted((Path(__file__).resolve().parents[2] / "domain_packs").iterdir())
        if (p / "groundeval.yaml").exists()
    ]
    out = []
    for style in ("default", "paper"):
        root = tmp_path_factory.mktemp(f"org-{style}")
        write_org(root, events=6000, seed=3, style=style)
        packs.append(root)
    for pack in packs:
        store = Store.open(pack)
        events = {r[0]: json.loads(r[1]) for r in store.query("SELECT id, raw::VARCHAR FROM events")}
        out.append((pack.name, generate(store), events))
    return out


@pytest.fixture(scope="module")
def question_sets(tmp_path_factory):
    return _question_sets(tmp_path_factory)


@pytest.mark.slow
def test_every_subject_shown_matches_one_event_of_the_log(question_sets):
    for name, qs, events in question_sets:
        assert qs.questions, name
        for q in qs.questions:
            for shown in q.meta["subjects"]:
                subject = events[shown["event_id"]]
                ts = datetime.fromisoformat(subject["timestamp"].replace("Z", "+00:00"))
                shown = {**shown, "ts_us": int(ts.timestamp() * 1_000_000)}
                matches = [e["id"] for e in events.values() if _words_match(shown, e)]
                assert matches == [shown["event_id"]], (name, q.text)


@pytest.mark.slow
def test_identical_texts_never_carry_different_answers(question_sets):
    from groundeval.questions.audit import label_of

    for name, qs, _ in question_sets:
        seen: dict[str, bool] = {}
        for q in qs.questions:
            assert seen.setdefault(q.text, label_of(q)) == label_of(q), (name, q.text)


def test_every_track_yields_and_no_shortcut_beats_the_limit(question_sets):
    for name, qs, _ in question_sets:
        counts = qs.metadata.counts
        for track in ("perspective", "counterfactual", "silence"):
            assert counts[track]["total"] > 0, (name, track, qs.metadata.skipped.get(track))
        if name.startswith("org-"):  # the synthetic orgs fill every quota
            assert {t: counts[t]["total"] for t in ("perspective", "counterfactual", "silence")} == {
                "perspective": 60,
                "counterfactual": 40,
                "silence": 40,
            }
        for track, row in qs.metadata.shortcut_audit.items():
            if row["questions"] >= 30:
                assert row["best_shortcut"] <= 0.60, (name, track, row)


# ----------------------------------------------------------------------------- at organisation shape


def test_counts_at_org_shape_match_a_brute_force_reading(tmp_path):
    """The subject-count path (every kind of posting: facts, artifact references,
    actors shared by hundreds of events, day/minute/second windows) on a paper-shaped
    org, where most subjects need actors and time: the shape on which, at 1M events,
    the former postings query parked every DuckDB thread. Each found reference names
    exactly its subject and the one before it does not; an unresolved subject's last
    reference fits several events."""
    from groundeval.synth.generate import write_org

    write_org(tmp_path, events=2500, seed=5, style="paper")
    store = Store.open(tmp_path)
    events = [json.loads(r[0]) for r in store.query("SELECT raw::VARCHAR FROM events ORDER BY id")]
    display = {a: s.display_name or a for a, s in store.manifest.access.actors.items()}
    sample = sorted(events, key=lambda e: hashlib.sha256(e["id"].encode()).hexdigest())[:120]
    requests = [
        (e["id"], Subject(e["id"], e["type"], _us(e["timestamp"]), e, tuple(e.get("actors", []))), Role())
        for e in sample
    ]
    index = SubjectIndex(GraphSQL(store.cursor), display)
    found = index.resolve(requests)
    levels = index.levels(requests)

    def count(ref) -> int:
        shown = {**ref.shown(), "ts_us": ref.ts_us}
        return sum(_words_match(shown, e, display) for e in events)

    assert sum(ref is not None for ref in found.values()) >= len(sample) // 2
    assert any(ref is not None and ref.actors for ref in found.values())
    assert any(ref is not None and ref.time for ref in found.values())
    for key, ref in found.items():
        if ref is None:
            assert count(levels[key][-1]) > 1
            continue
        assert count(ref) == 1
        at = levels[key].index(ref)
        if at:
            assert count(levels[key][at - 1]) > 1


def _us(timestamp: str) -> int:
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1_000_000)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=logs(), split=st.integers(0, 16), roles=st.lists(st.booleans(), min_size=2, max_size=2))
def test_references_do_not_depend_on_the_batch(tmp_path_factory, data, split, roles):
    """A reference is a function of the log, the subject and its role: resolved in one batch,
    in two (the second partly answered from memory, as when the generator resolves every
    track's requests first), or each alone in a fresh index, it is the same."""
    events, arts = data
    store = Store.open(_write(tmp_path_factory.mktemp("log"), events, arts))
    gs = GraphSQL(store.cursor)
    kinds = [Role(time=roles[0]), Role(time=roles[1], actors=False, hide=frozenset({("a", "jira")}))]
    requests = [
        ((e["id"], n), Subject(e["id"], e["type"], _us(e["timestamp"]), e, tuple(e["actors"])), role)
        for e in events
        for n, role in enumerate(kinds)
    ]
    whole = SubjectIndex(gs, DISPLAY).resolve(requests)
    batched = SubjectIndex(gs, DISPLAY)
    first = batched.resolve(requests[:split])
    second = batched.resolve(requests[split // 2 :])
    assert {**first, **second} == whole
    for request in requests[:6]:
        assert SubjectIndex(gs, DISPLAY).resolve([request]) == {request[0]: whole[request[0]]}
