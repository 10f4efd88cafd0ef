"""A small pack in the original GroundEval format, written from a dict (a module of its own).

A facilities help desk: outages are reported, repaired and reviewed. The config uses the
shapes of the original release — ``name: role`` actors, ``*_ratio`` Perspective keys,
``use_event_log_policy``, premise templates without placeholders, joins on
``artifact_ids.<subsystem>``, and ``search_space`` selector mappings with ``id_template``
and ``query_template`` — and the artifacts live in ``artifacts/<subsystem>/<id>.json``.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import yaml

JOIN = [{"cause": "artifact_ids.helpdesk", "effect": "artifact_ids.helpdesk"}]


def base_config() -> dict[str, Any]:
    return {
        "output_dir": "./eval_output",
        "artifacts_dir": "./artifacts",
        "use_event_log_policy": True,
        "actors": {"kim": "technician", "lou": "technician", "max": "manager", "nia": "tenant_rep"},
        "roles": {
            "technician": {"subsystems": ["helpdesk", "chat"], "broadcast_event_types": ["outage_reported"]},
            "manager": {"subsystems": ["helpdesk", "wiki", "chat", "email"], "broadcast_event_types": ["repair_done"]},
            "tenant_rep": {"subsystems": ["email"], "broadcast_event_types": ["outage_reported"]},
        },
        "perspective": {"positive_ratio": 0.5, "negative_permission_ratio": 0.25, "negative_temporal_ratio": 0.25},
        "causal_links": [
            {
                "name": "repair_follows_outage",
                "cause_event_type": "outage_reported",
                "effect_event_type": "repair_started",
                "premise_template": "the outage had been reported",
                "outcome_template": "a technician would have started a repair",
                "outcome_changed": True,
                "max_gap_days": 1,
                "join": copy.deepcopy(JOIN),
                "mechanism_aliases": ["dispatch"],
            },
            {
                "name": "review_follows_repair",
                "cause_event_type": "repair_done",
                "effect_event_type": "review_written",
                "premise_template": "the repair had been completed",
                "outcome_template": "a review would have been written",
                "outcome_changed": True,
                "join": copy.deepcopy(JOIN),
            },
        ],
        "silence_pairs": [
            {
                "trigger_event_type": "repair_done",
                "response_event_type": "review_written",
                "max_gap_days": 5,
                "search_space_subsystems": ["wiki"],
                "search_space": [
                    {"subsystem": "wiki", "query_template": "review {artifact_ids.helpdesk}"},
                    {"subsystem": "helpdesk", "id_template": "{artifact_ids.helpdesk}"},
                ],
                "join": copy.deepcopy(JOIN),
            },
        ],
        "easy_ratio": 0.34,
        "medium_ratio": 0.33,
        "hard_ratio": 0.33,
    }


EVENTS = [
    ("e01", "outage_reported", "2026-04-01T08:00:00", ["nia"], {"helpdesk": "HD-1"}),
    ("e02", "repair_started", "2026-04-01T09:00:00", ["kim"], {"helpdesk": "HD-1", "chat": "CH-1"}),
    ("e03", "repair_done", "2026-04-01T15:00:00", ["kim"], {"helpdesk": "HD-1"}),
    ("e04", "chat_message", "2026-04-02T12:00:00", ["lou", "kim"], {"chat": "CH-3"}),
    ("e05", "review_written", "2026-04-03T10:00:00", ["max"], {"helpdesk": "HD-1", "wiki": "WK-1"}),
    ("e06", "outage_reported", "2026-04-05T08:00:00", ["nia"], {"helpdesk": "HD-2"}),
    ("e07", "repair_started", "2026-04-05T10:00:00", ["lou"], {"helpdesk": "HD-2"}),
    ("e08", "repair_done", "2026-04-06T12:00:00", ["lou"], {"helpdesk": "HD-2", "chat": "CH-2"}),
    ("e09", "outage_reported", "2026-04-08T07:00:00", ["nia"], {"helpdesk": "HD-3", "email": "EM-1"}),
    ("e10", "repair_started", "2026-04-08T08:00:00", ["kim"], {"helpdesk": "HD-3"}),
    ("e11", "repair_done", "2026-04-08T13:00:00", ["kim"], {"helpdesk": "HD-3"}),
    ("e12", "review_written", "2026-04-09T09:00:00", ["max"], {"helpdesk": "HD-3", "wiki": "WK-2"}),
]

ARTIFACTS = {
    "helpdesk/HD-1": ("2026-04-01T08:00:00", "Lift stuck on floor 3", "Tenants report the east lift stuck."),
    "helpdesk/HD-2": ("2026-04-05T08:00:00", "Heating off in block B", "No heating since the night."),
    "helpdesk/HD-3": ("2026-04-08T07:00:00", "Water leak in garage", "Pipe burst near bay 12."),
    "chat/CH-1": ("2026-04-01T09:00:00", "lift crew", "Kim on site, replacing the door sensor."),
    "chat/CH-2": ("2026-04-06T12:00:00", "heating done", "Lou restarted the boiler."),
    "chat/CH-3": ("2026-04-02T12:00:00", "tools", "Who has the torque wrench?"),
    "wiki/WK-1": ("2026-04-03T10:00:00", "Review HD-1 lift", "Door sensor worn; schedule checks."),
    "wiki/WK-2": ("2026-04-09T09:00:00", "Review HD-3 leak", "Old pipe; replace the garage run."),
    "email/EM-1": ("2026-04-08T07:00:00", "Leak notice", "Garage closed until repaired."),
}


def shuffled(value: Any, rng: random.Random) -> Any:
    """The same YAML data with every mapping's keys in a random order (lists keep theirs)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


def write_pack(root: Path, config: dict[str, Any] | None = None, *, events_name: str = "events.jsonl") -> Path:
    """Write the pack (``config`` defaults to :func:`base_config`) and return its folder."""
    root.mkdir(parents=True, exist_ok=True)
    cfg = base_config() if config is None else config
    (root / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    lines = [
        json.dumps({"id": i, "type": t, "timestamp": ts, "actors": a, "artifact_ids": ids, "facts": {}})
        for i, t, ts, a, ids in EVENTS
    ]
    (root / events_name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    for rel, (ts, title, body) in ARTIFACTS.items():
        sub, aid = rel.split("/")
        p = root / "artifacts" / sub / f"{aid}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(
            json.dumps({"id": aid, "timestamp": ts, "subsystem": sub, "title": title, "body": body}, indent=2),
            encoding="utf-8",
        )
    return root


def line_of(text: str, needle: str) -> int:
    """The 1-based number of the one line of ``text`` containing ``needle``."""
    hits = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]
