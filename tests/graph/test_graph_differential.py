"""Differential test: the SQL + graph implementation against a brute-force reference.

Small random contracts (ties, gap boundaries, "1" vs 1, lists, missing keys, match
filters) are written as real packs, loaded, and every derived record and every
Perspective label must equal what a pure-Python reading of the definitions gives.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.contract.paths import join_key, resolve
from groundeval.graph.build import build_graph
from groundeval.graph.sql import GraphSQL
from groundeval.questions.subjects import SubjectIndex
from groundeval.store.store import Store
from groundeval.tracks.perspective import candidates as perspective

BASE = datetime(2026, 3, 1, tzinfo=timezone.utc)
GAP_DAYS = 2
KEY_VALUES = [1, "1", 1.0, 2, "x", "", True, [1, "x"], ["1", 1.0], [], None]  # a string or a list, numbers as ids
SUBSYSTEMS = ["s1", "s2"]


def _us(dt: datetime) -> int:
    return int((dt - datetime(1970, 1, 1, tzinfo=timezone.utc)) / timedelta(microseconds=1))


@st.composite
def contracts(draw):
    n = draw(st.integers(3, 14))
    arts = [f"X{i}" for i in range(draw(st.integers(1, 6)))]
    events = []
    for i in range(n):
        facts = {}
        if draw(st.booleans()) or True:
            k = draw(st.sampled_from(KEY_VALUES + ["missing"]))
            if k != "missing":
                facts["k"] = k
        if draw(st.booleans()):
            facts["m"] = draw(st.sampled_from([1, "1", 2]))
        refs = draw(st.lists(st.sampled_from(arts), max_size=2, unique=True))
        events.append(
            {
                "id": f"e{i:02d}",
                "type": draw(st.sampled_from(["A", "B", "C"])),
                "timestamp": (BASE + timedelta(hours=6 * draw(st.integers(0, 20)))).isoformat().replace("+00:00", "Z"),
                "actors": draw(st.lists(st.sampled_from(["u1", "u2"]), max_size=2, unique=True)),
                "artifact_ids": {"doc": refs} if refs else {},
                "facts": facts,
            }
        )
    artifacts = {
        a: {
            "subsystem": draw(st.sampled_from(SUBSYSTEMS)),
            "timestamp": (BASE + timedelta(hours=6 * draw(st.integers(0, 20)))).isoformat(),
            "title": f"doc {a}",
            "body": draw(st.sampled_from(["alpha beta", "beta", "gamma alpha"])),
            **({"visibility": {"actors": ["u1"]}} if draw(st.booleans()) else {}),
        }
        for a in arts
    }
    match = draw(st.sampled_from([None, 1, "2"]))
    two_joins = draw(st.booleans())
    causal = {
        "name": "a_then_b",
        "cause_event_type": "A",
        "effect_event_type": "B",
        "max_gap_days": GAP_DAYS,
        "join": [{"cause": "facts.k", "effect": "facts.k"}]
        + ([{"cause": "facts.m", "effect": "facts.m"}] if two_joins else []),
    }
    if match is not None:
        causal.update(match_field="facts.m", match_value=match)
    silence = {
        "name": "a_answered",
        "trigger_event_type": "A",
        "response_event_type": draw(st.sampled_from("BC")),
        "max_gap_days": GAP_DAYS,
        "join": [{"trigger": "facts.k", "response": "facts.k"}],
        "search_space_subsystems": ["s1"],
        "search_space_selectors": [{"subsystem": "s1", "query_template": "alpha {facts.k}"}],
        "search_space": ["X{facts.k}"],
    }
    switch = BASE + timedelta(hours=6 * draw(st.integers(0, 20)))
    manifest = {
        "name": "diff",
        "evaluation": {"causal_links": [causal], "silence_pairs": [silence], "perspective_actors": ["u1", "u2"]},
        "access": {
            "actors": {
                "u1": "r1",
                "u2": [{"role": "r1", "until": switch.isoformat()}, {"role": "r2", "since": switch.isoformat()}],
            },
            "roles": {"r1": {"subsystems": ["s1"]}, "r2": {"subsystems": ["s2"], "broadcast_event_types": ["A"]}},
        },
    }
    return manifest, events, artifacts


def write_pack(root: Path, manifest, events, artifacts) -> Path:
    (root / "groundeval.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    (root / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    for aid, a in artifacts.items():
        d = root / "artifacts" / a["subsystem"]
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{aid}.json").write_text(json.dumps(a), encoding="utf-8")
    return root


# ----------------------------------------------------------------------------- reference


def _ts(e) -> datetime:
    return datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00"))


def _joined(a, b, joins) -> bool:
    return all(join_key(resolve(a, pa)) & join_key(resolve(b, pb)) for pa, pb in joins)


def _has_keys(e, paths) -> bool:
    return all(join_key(resolve(e, p)) for p in paths)


def reference(manifest, events):
    gap = timedelta(days=GAP_DAYS)
    c = manifest["evaluation"]["causal_links"][0]
    cj = [(j["cause"], j["effect"]) for j in c["join"]]
    order = sorted(events, key=lambda e: (_ts(e), e["id"]))
    causes = [e for e in events if e["type"] == c["cause_event_type"]]
    if "match_field" in c:
        causes = [e for e in causes if join_key(resolve(e, c["match_field"])) & join_key(c["match_value"])]
    edges = set()
    for ce in causes:
        joined = [
            e
            for e in order
            if e["type"] == c["effect_event_type"] and _ts(ce) < _ts(e) <= _ts(ce) + gap and _joined(ce, e, cj)
        ]
        if joined:
            edges.add((ce["id"], joined[0]["id"]))
    distractors = set()
    for ce in causes:
        nxt = [e for e in order if e["type"] == c["effect_event_type"] and _ts(e) > _ts(ce)]
        if (
            nxt
            and _ts(nxt[0]) <= _ts(ce) + gap
            and _has_keys(ce, [p for p, _ in cj])
            and _has_keys(nxt[0], [p for _, p in cj])
            and not _joined(ce, nxt[0], cj)
            and (ce["id"], nxt[0]["id"]) not in edges
        ):
            distractors.add((ce["id"], nxt[0]["id"]))
    s = manifest["evaluation"]["silence_pairs"][0]
    sj = [(j["trigger"], j["response"]) for j in s["join"]]
    presences, absences, ambiguous = [], set(), set()
    for t in [e for e in order if e["type"] == s["trigger_event_type"]]:
        resp = [e for e in order if e["type"] == s["response_event_type"] and e["id"] != t["id"] and _joined(t, e, sj)]
        inside = [e for e in resp if _ts(t) < _ts(e) <= _ts(t) + gap]
        before = [e for e in resp if _ts(e) <= _ts(t)]
        after = [e for e in resp if _ts(e) > _ts(t) + gap]
        if not _has_keys(t, [p for p, _ in sj]):
            ambiguous.add((t["id"], "missing_join_key", None))
        elif inside:
            presences.append((t["id"], inside[0]["id"]))
        elif before:
            ambiguous.add((t["id"], "response_before_trigger", before[-1]["id"]))
        elif after:
            ambiguous.add((t["id"], "response_outside_gap", after[0]["id"]))
        else:
            absences.add(t["id"])
    seen, kept = set(), set()
    for t, r in presences:  # triggers in time order: the earliest keeps a shared response
        if r not in seen:
            seen.add(r)
            kept.add((t, r))
    return edges, distractors, kept, absences, ambiguous


def visible_ref(manifest, events, artifacts, actor, t: datetime, aid) -> bool:
    a = artifacts[aid]
    if datetime.fromisoformat(a["timestamp"]) > t:
        return False
    spec = manifest["access"]["actors"][actor]
    windows = [{"role": spec}] if isinstance(spec, str) else spec
    roles = [
        w["role"]
        for w in windows
        if (w.get("since") is None or datetime.fromisoformat(w["since"]) <= t)
        and (w.get("until") is None or t < datetime.fromisoformat(w["until"]))
    ]
    rs = manifest["access"]["roles"]
    sub_ok = any(a["subsystem"] in rs[r]["subsystems"] for r in roles) or any(
        e["type"] in rs[r].get("broadcast_event_types", []) and _ts(e) <= t and aid in e["artifact_ids"].get("doc", [])
        for r in roles
        for e in events
    )
    act_ok = "visibility" not in a or actor in a["visibility"]["actors"]
    return sub_ok and act_ok


@pytest.mark.slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(contracts())
def test_graph_matches_reference(tmp_path_factory, contract):
    manifest, events, artifacts = contract
    root = write_pack(tmp_path_factory.mktemp("pack"), manifest, events, artifacts)
    store = Store.open(root)
    eg = build_graph(store)
    edges, distractors, presences, absences, ambiguous = reference(manifest, events)
    assert {(e.cause_event_id, e.effect_event_id) for e in eg.causal_edges} == edges
    assert {(d.cause_event_id, d.effect_event_id) for d in eg.distractors} == distractors
    assert {(p.trigger_event_id, p.response_event_id) for p in eg.presences} == presences
    assert {a.trigger_event_id for a in eg.absences} == absences
    assert {(a.trigger_event_id, a.reason, a.response_event_id) for a in eg.ambiguous} == ambiguous
    # records are sorted and carry their events' times (fetched with the records, not per event)
    times = {e["id"]: _us(_ts(e)) for e in events}
    for records in (eg.causal_edges, eg.distractors, eg.presences, eg.absences, eg.ambiguous):
        assert records == sorted(records)
    for r in eg.causal_edges + eg.distractors:
        assert (r.cause_ts_us, r.effect_ts_us) == (times[r.cause_event_id], times[r.effect_event_id])
        assert eg.events[r.effect_event_id].ts_us == r.effect_ts_us  # lazy event lookup
    for r in eg.presences + eg.absences:
        assert r.trigger_ts_us == times[r.trigger_event_id]
        assert r.response_ts_us == (times[r.response_event_id] if r.response_event_id else None)
    # search space: only real artifacts, never placeholders; includes the trigger's own
    ids = {a for a in artifacts}
    for rec in eg.absences + eg.presences:
        trig = next(e for e in events if e["id"] == rec.trigger_event_id)
        assert set(rec.expected_search_space) <= ids
        assert set(trig["artifact_ids"].get("doc", [])) <= set(rec.expected_search_space)
        key = join_key(resolve(trig, "facts.k"))
        if len(key) == 1 and f"X{next(iter(key))}" in ids and not isinstance(resolve(trig, "facts.k"), list):
            assert f"X{next(iter(key))}" in rec.expected_search_space

    # Perspective labels equal the brute-force cone
    gs = GraphSQL(store.cursor)
    cands, _ = perspective.candidates(gs, store.manifest.evaluation, SubjectIndex(gs, {}))
    for c in cands:
        t = c.payload["truth"]
        as_of = c.payload["as_of"]
        target = next(e for e in events if e["id"] == t.target_event_id)
        # only witnesses count: documents created at or after the event (one minute's tolerance)
        arts = sorted(
            a
            for a in target["artifact_ids"].get("doc", [])
            if datetime.fromisoformat(artifacts[a]["timestamp"]) >= _ts(target) - timedelta(minutes=1)
        )
        vis = [a for a in arts if visible_ref(manifest, events, artifacts, c.actor, as_of, a)]
        assert t.target_artifacts == arts
        assert t.evidence_artifacts == vis
        happened = _ts(target) <= as_of
        existed = [datetime.fromisoformat(artifacts[a]["timestamp"]) <= as_of for a in arts]
        if c.bucket == "positive":
            assert vis and happened
        elif c.bucket == "negative_permission":
            assert not vis and happened and all(existed)
        else:
            assert not any(existed)
            later = max([_ts(target)] + [datetime.fromisoformat(artifacts[a]["timestamp"]) for a in arts])
            assert any(visible_ref(manifest, events, artifacts, c.actor, later, a) for a in arts)
