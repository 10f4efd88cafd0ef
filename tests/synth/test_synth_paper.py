"""``synth --style paper``: the awkward shapes of real exports, deterministic, loadable and verifiable."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from groundeval.contract.paths import render_template, resolve
from groundeval.errors import ContractError
from groundeval.graph.build import build_graph
from groundeval.store.store import Store
from groundeval.synth import generate as gen
from groundeval.synth.generate import write_org
from groundeval.synth.shape import SUBSYSTEMS

N = 3000
BOOKKEEPING = {"flow", "step", "tags"}


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "groundeval.cli.main", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONHASHSEED="0"),
    )


@pytest.fixture(scope="module")
def org(tmp_path_factory):
    out = tmp_path_factory.mktemp("paper")
    write_org(out, events=N, seed=0, style="paper", jobs=1)
    manifest = yaml.safe_load((out / "groundeval.yaml").read_text())
    events = _jsonl(out / "events.jsonl")
    artifacts = {a["id"]: a for a in _jsonl(out / "artifacts.jsonl")}
    return out, manifest, events, artifacts


def _ids(value) -> list[str]:
    return value if isinstance(value, list) else [value]


def _created(a: dict) -> str:
    return a.get("timestamp") or a.get("created_at") or a["date"]


# ---------------------------------------------------------------------------- determinism


def test_same_bytes_across_processes_and_hash_seeds(tmp_path):
    outs = []
    for i, hashseed in enumerate(("0", "4242")):
        out = tmp_path / f"run{i}"
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "groundeval.cli.main",
                "synth",
                str(out),
                "--events",
                "1500",
                "--seed",
                "7",
                "--style",
                "paper",
            ],
            check=True,
            env=env,
            capture_output=True,
        )
        outs.append(_tree_digest(out))
    assert outs[0] == outs[1]
    assert set(outs[0]) == {"groundeval.yaml", "events.jsonl", "artifacts.jsonl"}


def test_output_does_not_depend_on_worker_count(tmp_path, monkeypatch):
    monkeypatch.setattr(gen, "BLOCK", 400)  # several blocks at a small size
    one = write_org(tmp_path / "one", events=1300, seed=3, jobs=1, style="paper")
    two = write_org(tmp_path / "two", events=1300, seed=3, jobs=2, style="paper")
    assert one["blocks"] == two["blocks"] == 4
    assert _tree_digest(tmp_path / "one") == _tree_digest(tmp_path / "two")
    events = _jsonl(tmp_path / "one" / "events.jsonl")
    assert len(events) == 1300 == len({e["id"] for e in events})
    arts = _jsonl(tmp_path / "one" / "artifacts.jsonl")
    assert len(arts) == len({a["id"] for a in arts})


def test_styles_and_seeds_differ_and_the_default_is_unchanged(tmp_path):
    write_org(tmp_path / "p1", events=600, seed=1, style="paper")
    write_org(tmp_path / "p2", events=600, seed=2, style="paper")
    write_org(tmp_path / "d", events=1500, seed=7)
    assert (tmp_path / "p1" / "events.jsonl").read_bytes() != (tmp_path / "p2" / "events.jsonl").read_bytes()
    # the default style's bytes, as written before styles existed (events, artifacts and manifest)
    h = hashlib.sha256()
    for p in sorted((tmp_path / "d").rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(tmp_path / "d")).encode())
            h.update(p.read_bytes())
    assert h.hexdigest() == "44c593975f502056ff51c2b97a4fa05975399b56edefebe1102d3a085627c870"


def test_unknown_style_is_a_contract_error(tmp_path):
    with pytest.raises(ContractError):
        write_org(tmp_path, events=10, style="fancy")


# ---------------------------------------------------------------------------- shapes


def test_scale_knobs_match_the_default(org):
    _out, m, events, _arts = org
    assert len(events) == N
    assert len(m["access"]["actors"]) == 72
    roles = m["access"]["roles"]
    assert len(roles) == 8 and [r for r, v in roles.items() if v.get("external")] == ["external"]
    ev = m["evaluation"]
    assert len(ev["causal_links"]) == 25 and len({c["name"] for c in ev["causal_links"]}) == 25
    assert len(ev["silence_pairs"]) == 19 and len({s["name"] for s in ev["silence_pairs"]}) == 19
    windows = [w for v in m["access"]["actors"].values() if isinstance(v, list) for w in v]
    assert any("since" in w for w in windows) and any("until" in w for w in windows)
    assert any(v.get("broadcast_event_types") for v in roles.values())


def test_facts_are_bookkeeping_only(org):
    _out, _m, events, arts = org
    ids = set(arts) | {e["id"] for e in events}
    with_list = without = 0
    for e in events:
        facts = e.get("facts")
        if not facts:
            without += 1
            continue
        assert set(facts) <= BOOKKEEPING, e
        for v in facts.values():
            for x in v if isinstance(v, list) else [v]:
                assert not isinstance(x, str) or x not in ids, e
        with_list += any(isinstance(v, list) for v in facts.values())
    assert with_list > 0.05 * N and without > 0.05 * N
    # bookkeeping is identical across instances: flow and step never tell two instances apart
    by_type: dict[str, set] = {}
    for e in events:
        f = e.get("facts") or {}
        by_type.setdefault(e["type"], set()).add((f.get("flow"), f.get("step")))
    assert all(len(v) <= 2 for v in by_type.values())  # (flow, step), plus no facts for some chatter


def test_identity_lives_in_artifact_ids(org):
    _out, m, events, arts = org
    lists = 0
    for e in events:
        assert e["artifact_ids"] and set(e["artifact_ids"]) <= set(SUBSYSTEMS), e
        for sub, v in e["artifact_ids"].items():
            lists += isinstance(v, list)
            for aid in _ids(v):
                assert arts[aid]["subsystem"] == sub
    assert lists > 0
    ev = m["evaluation"]
    by_type: dict[str, list[dict]] = {}
    for e in events:
        by_type.setdefault(e["type"], []).append(e)
    for spec in ev["causal_links"]:
        for j in spec["join"]:
            for side, etype in (("cause", spec["cause_event_type"]), ("effect", spec["effect_event_type"])):
                path = j[side]
                assert path.startswith("artifact_ids.") and path.split(".", 1)[1] in SUBSYSTEMS
                assert by_type[etype] and all(resolve(e, path) for e in by_type[etype]), (spec["name"], side)
    for spec in ev["silence_pairs"]:
        for j in spec["join"]:
            for side, etype in (("trigger", spec["trigger_event_type"]), ("response", spec["response_event_type"])):
                path = j[side]
                assert path.startswith("artifact_ids.") and path.split(".", 1)[1] in SUBSYSTEMS
                assert by_type[etype] and all(resolve(e, path) for e in by_type[etype]), (spec["name"], side)
        # every id selector resolves on every trigger to an artifact of its subsystem
        for sel in spec["search_space_selectors"]:
            assert set(sel) in ({"subsystem", "id_template"}, {"subsystem", "query_template"})
            if "id_template" in sel:
                assert sel["id_template"].startswith("{artifact_ids.")
                for e in by_type[spec["trigger_event_type"]]:
                    aid = render_template(sel["id_template"], e)
                    assert aid in arts and arts[aid]["subsystem"] == sel["subsystem"], (spec["name"], e["id"])


def test_templates_have_no_placeholders(org):
    _out, m, _events, _arts = org
    for spec in m["evaluation"]["causal_links"]:
        assert spec["premise_template"] and "{" not in spec["premise_template"]
        assert spec["outcome_template"] and "{" not in spec["outcome_template"]
    for spec in m["evaluation"]["silence_pairs"]:
        for sel in spec["search_space_selectors"]:
            assert "{" not in sel.get("query_template", "")


def test_documents_record_their_event_and_some_events_only_point_back(org):
    _out, _m, events, arts = org
    recorded = only_earlier = 0
    for e in events:
        times = [_created(arts[aid]) for v in e["artifact_ids"].values() for aid in _ids(v)]
        assert all(t <= e["timestamp"] for t in times)
        if e["timestamp"] in times:
            recorded += 1
        else:
            only_earlier += 1
    assert recorded > 0.5 * N and only_earlier > 0.05 * N
    # every document is recorded by an event at its own creation time
    made = {
        aid
        for e in events
        for v in e["artifact_ids"].values()
        for aid in _ids(v)
        if _created(arts[aid]) == e["timestamp"]
    }
    assert made == set(arts)


def test_dense_same_minute_multi_actor_events(org):
    _out, _m, events, _arts = org
    per_day = Counter((e["type"], e["timestamp"][:10]) for e in events)
    assert max(per_day.values()) >= 10
    per_minute = Counter((e["type"], e["timestamp"][:16]) for e in events)
    assert sum(1 for n in per_minute.values() if n >= 2) >= 20
    assert all(e["timestamp"].endswith(":00Z") for e in events)  # minute resolution, like many exports
    sizes = Counter(len(e["actors"]) for e in events)
    assert min(sizes) >= 1 and max(sizes) <= 4
    assert sum(n for k, n in sizes.items() if k >= 2) > 0.15 * N and sizes[4] > 0
    assert any(a.endswith("-bot") for e in events for a in e["actors"])
    # written as an export: in time order
    assert [e["timestamp"] for e in events] == sorted(e["timestamp"] for e in events)


def test_access_policy_has_restricted_artifacts(org):
    _out, _m, _events, arts = org
    vis = [a["visibility"] for a in arts.values() if "visibility" in a]
    assert any(v.get("actors") for v in vis) and any(v.get("roles") for v in vis)


# ---------------------------------------------------------------------------- loading and semantics


@pytest.mark.slow
def test_pack_loads_verifies_and_graphs(org):
    out, m, _events, _arts = org
    info = _cli("info", str(out), "--json")
    assert info.returncode == 0, info.stderr
    res = _cli("verify", str(out), "--level", "3", "--format", "json")
    report = json.loads(res.stdout)
    assert report["summary"]["error"] == 0, [f for f in report["findings"] if f.get("severity") == "error"]
    store = Store.open(out)
    try:
        g = build_graph(store)
    finally:
        store.close()
    s = g.stats
    assert s["causal_edges"] and s["distractors"] and s["absences"] and s["presences"]
    assert not s["ambiguous"]
    assert {e.spec for e in g.causal_edges} == {c["name"] for c in m["evaluation"]["causal_links"]}
    # dense interleaving: a distractor's effect belongs to another instance, so no id is shared
    assert len({d.spec for d in g.distractors}) >= 10


def test_original_format_has_the_same_records(tmp_path):
    write_org(tmp_path / "native", events=800, seed=5, style="paper")
    write_org(tmp_path / "orig", events=800, seed=5, style="paper", fmt="original")
    assert (tmp_path / "native" / "events.jsonl").read_bytes() == (tmp_path / "orig" / "events.jsonl").read_bytes()
    native = {a["id"]: a for a in _jsonl(tmp_path / "native" / "artifacts.jsonl")}
    files = sorted((tmp_path / "orig" / "artifacts").rglob("*.json"))
    assert len(files) == len(native)
    for p in files:
        body = json.loads(p.read_text(encoding="utf-8"))
        assert {"id": p.stem, "subsystem": p.parent.name} | body == native[p.stem]
    cfg = yaml.safe_load((tmp_path / "orig" / "config.yaml").read_text())
    assert len(cfg["causal_links"]) == 25 and len(cfg["silence_pairs"]) == 19
    for sp in cfg["silence_pairs"]:
        assert "search_space_selectors" not in sp
        assert sp["search_space"] and all(isinstance(x, dict) and "subsystem" in x for x in sp["search_space"])
    store = Store.open(tmp_path / "orig")  # mapping search_space entries are selectors in the original format
    try:
        assert all(sp.search_space_selectors for sp in store.manifest.evaluation.silence_pairs)
        assert store.query("SELECT count(*) FROM events")[0][0] == 800
    finally:
        store.close()


def test_every_declared_join_is_carried_by_both_steps():
    from groundeval.synth.paper import FLOWS

    for f in FLOWS:
        for name, c, e, sub, *_ in f.causal:
            assert sub in f.subsystems_of(c) & f.subsystems_of(e), name
        for name, t, r, sub, _sel in f.silence:
            assert sub in f.subsystems_of(t) & f.subsystems_of(r), name
