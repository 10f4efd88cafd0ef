"""JSON Schemas of every file format, generated from the pydantic models.

``groundeval schema --out contracts`` rewrites the checked-in copies; a test fails
when they drift from the models. Each entry is ``file stem -> "module:Model"``
(imported lazily so the registry has no import cycles; the answer formats come from the
built-in tracks).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from ..tracks import builtin_tracks

SCHEMAS: dict[str, str] = {
    "manifest": "groundeval.contract.models:Manifest",
    "event": "groundeval.contract.models:Event",
    "artifact": "groundeval.contract.models:Artifact",
    "questions": "groundeval.questions.model:QuestionSet",
    "trace": "groundeval.trace.model:Trace",
    "score": "groundeval.scoring.model:QuestionScore",
    "report": "groundeval.scoring.model:RunReport",
    "run": "groundeval.agents.runinfo:RunInfo",
    "gate_baseline": "groundeval.testing.baseline:Baseline",
    # task contracts for an agent's own tools (docs/tasks.md): the contract, a run, its score
    "task_contract": "groundeval.tasks.model:TaskContract",
    "observed_run": "groundeval.observe.model:ObservedRun",
    "task_score": "groundeval.tasks.score:TaskScore",
    # worlds (docs/worlds.md): the manifest, a task, an episode's trace, its verdict, a run's report
    "world": "groundeval.worlds.model:WorldManifest",
    "world_task": "groundeval.worlds.model:WorldTask",
    "world_trace": "groundeval.worlds.model:WorldTrace",
    "world_verdict": "groundeval.worlds.model:WorldVerdict",
    "world_report": "groundeval.worlds.scorecard:WorldReport",
}
# one answer format per built-in track: ``answer_<track>``
SCHEMAS.update({f"answer_{t.name}": f"{t.answer_model.__module__}:{t.answer_model.__name__}" for t in builtin_tracks()})
SCHEMAS = dict(sorted(SCHEMAS.items()))


def schema_for(name: str) -> dict[str, Any]:
    module, attr = SCHEMAS[name].split(":")
    model = getattr(importlib.import_module(module), attr)
    schema = model.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://groundeval.dev/contracts/{name}.schema.json"
    return schema


def render(name: str) -> str:
    return json.dumps(schema_for(name), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(SCHEMAS):
        path = out_dir / f"{name}.schema.json"
        path.write_text(render(name), encoding="utf-8")
        written.append(path)
    return written
