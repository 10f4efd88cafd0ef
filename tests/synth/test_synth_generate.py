"""The synthetic org: exact size, byte-identical per seed, loadable in both formats, valid by construction."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.errors import ContractError
from groundeval.store.store import Store
from groundeval.synth import generate as gen
from groundeval.synth.generate import write_org
from groundeval.synth.shape import ROLES, SUBSYSTEMS


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _events(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "events.jsonl").read_text(encoding="utf-8").splitlines()]


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_same_seed_same_bytes_across_processes_and_hash_seeds(tmp_path):
    outs = []
    for i, hashseed in enumerate(("0", "12345")):
        out = tmp_path / f"run{i}"
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        subprocess.run(
            [sys.executable, "-m", "groundeval.cli.main", "synth", str(out), "--events", "1500", "--seed", "7"],
            check=True,
            env=env,
            capture_output=True,
        )
        outs.append(_tree_digest(out))
    assert outs[0] == outs[1]
    assert set(outs[0]) == {"groundeval.yaml", "events.jsonl", "artifacts.jsonl"}


def test_different_seed_different_org(tmp_path):
    write_org(tmp_path / "a", events=800, seed=1)
    write_org(tmp_path / "b", events=800, seed=2)
    assert (tmp_path / "a" / "events.jsonl").read_bytes() != (tmp_path / "b" / "events.jsonl").read_bytes()


def test_output_does_not_depend_on_worker_count(tmp_path, monkeypatch):
    monkeypatch.setattr(gen, "BLOCK", 400)  # several blocks at a small size
    one = write_org(tmp_path / "one", events=1300, seed=3, jobs=1)
    two = write_org(tmp_path / "two", events=1300, seed=3, jobs=2)
    assert one["blocks"] == two["blocks"] == 4
    assert _tree_digest(tmp_path / "one") == _tree_digest(tmp_path / "two")
    ids = [e["id"] for e in _events(tmp_path / "one")]
    assert len(ids) == 1300 == len(set(ids))


def test_default_shape_is_declared_in_the_manifest(tmp_path):
    write_org(tmp_path, events=1000, seed=0)
    m = yaml.safe_load((tmp_path / "groundeval.yaml").read_text())
    ev = m["evaluation"]
    assert len(m["access"]["actors"]) == 72
    assert len(m["access"]["roles"]) == 8
    external = [r for r, v in m["access"]["roles"].items() if v.get("external")]
    assert external and all(not m["access"]["roles"][r]["subsystems"] for r in external)
    assert len(ev["causal_links"]) == 25 and len({c["name"] for c in ev["causal_links"]}) == 25
    assert len(ev["silence_pairs"]) == 19 and len({s["name"] for s in ev["silence_pairs"]}) == 19
    granted = {s for v in ROLES.values() for s in v["subsystems"]}
    assert granted == set(SUBSYSTEMS)
    windows = [w for v in m["access"]["actors"].values() if isinstance(v, list) for w in v]
    assert any("since" in w for w in windows) and any("until" in w for w in windows)


def test_both_formats_load_with_the_same_records(tmp_path):
    write_org(tmp_path / "native", events=1200, seed=5, fmt="native")
    write_org(tmp_path / "orig", events=1200, seed=5, fmt="original")
    assert (tmp_path / "orig" / "config.yaml").is_file() and (tmp_path / "orig" / "artifacts").is_dir()
    a, b = Store.open(tmp_path / "native"), Store.open(tmp_path / "orig")
    try:
        assert a.query("SELECT count(*) FROM events")[0][0] == 1200
        ev = "SELECT id, type, epoch_us(ts), raw::VARCHAR FROM events ORDER BY id"
        assert a.query(ev) == b.query(ev)
        art = "SELECT id, subsystem, epoch_us(created), title, restricted FROM artifacts ORDER BY id"
        assert a.query(art) == b.query(art)
        roles = "SELECT actor, role, since::VARCHAR, until::VARCHAR FROM actor_roles ORDER BY ALL"
        assert a.query(roles) == b.query(roles)
        assert a.query("SELECT count(*) FROM artifacts WHERE restricted")[0][0] > 0
        assert a.summary()["subsystems"] == sorted(SUBSYSTEMS)
    finally:
        a.close()
        b.close()


def test_bad_arguments_are_contract_errors(tmp_path):
    with pytest.raises(ContractError):
        write_org(tmp_path, events=10, fmt="parquet")
    with pytest.raises(ContractError):
        write_org(tmp_path, events=0)
    with pytest.raises(ContractError):
        write_org(tmp_path, events=10, days=3)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 600))
def test_responses_follow_triggers_inside_the_gap(tmp_path_factory, seed, n):
    """No response before its trigger or past the gap; every actor active when acting."""
    out = tmp_path_factory.mktemp("org")
    write_org(out, events=n, seed=seed)
    m = yaml.safe_load((out / "groundeval.yaml").read_text())
    events = _events(out)
    assert len(events) == n
    windows = {}
    for actor, spec in m["access"]["actors"].items():
        if isinstance(spec, str):
            spec = [{"role": spec}]
        elif isinstance(spec, dict):
            spec = [spec]
        windows[actor] = spec
    by_type_key: dict[tuple[str, str], list[datetime]] = defaultdict(list)
    for e in events:
        t = _ts(e["timestamp"])
        for a in e["actors"]:
            assert any(
                (w.get("since") is None or _ts(w["since"]) <= t) and (w.get("until") is None or t < _ts(w["until"]))
                for w in windows[a]
            ), (a, e["id"])
        for path_key in ("incident_id", "ticket_id", "pr_id", "opportunity_id", "employee_id", "hire_id"):
            if path_key in e["facts"]:
                by_type_key[(e["type"], e["facts"][path_key])].append(t)
    for spec in m["evaluation"]["silence_pairs"] + m["evaluation"]["causal_links"]:
        trig = spec.get("trigger_event_type", spec.get("cause_event_type"))
        resp = spec.get("response_event_type", spec.get("effect_event_type"))
        gap = timedelta(days=spec["max_gap_days"])
        for (etype, key), times in by_type_key.items():
            if etype != resp:
                continue
            assert len(times) == 1
            causes = by_type_key.get((trig, key), [])
            for c in causes:
                assert timedelta(0) < times[0] - c <= gap, (spec["name"], key)
