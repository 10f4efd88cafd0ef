"""Pack drafts for verifier tests: start from a bundled pack, change one thing, write it out.

A module of its own (not conftest) so test files can import it by a unique name."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "domain_packs" / "tiny"
ORIGINAL = REPO / "tests" / "contract" / "packs" / "original"


class PackDraft:
    """An editable copy of a pack: manifest dict, event dicts (or raw lines), artifact dicts (or raw text)."""

    def __init__(self, src: Path = TINY):
        self.manifest_name = "config.yaml" if (src / "config.yaml").exists() else "groundeval.yaml"
        self.manifest: dict[str, Any] = yaml.safe_load((src / self.manifest_name).read_text())
        self.manifest_text: str | None = None
        events = src / "events.jsonl"
        self.events: list[Any] = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
        self.artifacts: dict[str, Any] = {
            p.relative_to(src / "artifacts").as_posix(): json.loads(p.read_text())
            for p in sorted((src / "artifacts").rglob("*.json"))
        }

    def event(self, event_id: str) -> dict[str, Any]:
        return next(e for e in self.events if isinstance(e, dict) and e.get("id") == event_id)

    def write(self, root: Path) -> Path:
        root.mkdir(parents=True, exist_ok=True)
        text = (
            self.manifest_text
            if self.manifest_text is not None
            else yaml.safe_dump(copy.deepcopy(self.manifest), sort_keys=False)
        )
        (root / self.manifest_name).write_text(text)
        lines = [e if isinstance(e, str) else json.dumps(e) for e in self.events]
        (root / "events.jsonl").write_text("".join(line + "\n" for line in lines))
        for rel, data in self.artifacts.items():
            p = root / "artifacts" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(data if isinstance(data, str) else json.dumps(data))
        return root
