"""``run.json``: who ran what, how and when — kept apart from traces so scoring never sees
wall-clock figures. One file per output folder; each (re)start adds a session."""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..models import StrictModel
from ..trace.text import escape_all
from ..trace.model import ERRORED_STATUSES  # re-exported: the runner and the CLI read it here

RunStatus = Literal["running", "completed", "failed", "interrupted", "aborted"]


def errored_count(by_status: dict[str, int]) -> int:
    return sum(by_status.get(s, 0) for s in ERRORED_STATUSES)


_Model = StrictModel  # the one shared base of groundeval's own formats


class Session(_Model):
    started: datetime
    ended: datetime | None = None
    wall_clock_s: float | None = None
    status: RunStatus = "running"
    episodes: int = Field(0, description="Episodes finished and kept in this session.")
    skipped: int = Field(0, description="Episodes already in traces.jsonl (resume).")
    message: str | None = None


class RunInfo(_Model):
    """The ``run.json`` file."""

    schema_version: str = "1"
    agent: dict[str, Any] = Field(description="Name, and model/provider/settings for LLM agents.")
    mode: Literal["tool", "context", "zero-shot"]
    settings: dict[str, Any] = Field(default_factory=dict, description="Concurrency, timeout, step budget.")
    pack: str | None = None
    contract_digest: str
    questions: dict[str, Any] = Field(default_factory=dict, description="Source file and count.")
    versions: dict[str, str] = Field(default_factory=dict)
    status: RunStatus = "running"
    episodes_total: int = 0
    episodes_done: int = 0
    by_status: dict[str, int] = Field(default_factory=dict, description="Trace status counts.")
    wall_clock_s: float = Field(0.0, description="Sum over sessions.")
    sessions: list[Session] = Field(default_factory=list)


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in ("groundeval", "duckdb", "pydantic", "httpx"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


def now() -> datetime:
    return datetime.now(timezone.utc)


def read_run_info(path: Path) -> RunInfo | None:
    try:
        return RunInfo.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_run_info(path: Path, info: RunInfo) -> None:
    """Atomic replace: a crash never leaves half a ``run.json``."""
    tmp = path.with_name(path.name + ".tmp")
    # an agent or model name from the command line may hold a lone surrogate (bytes of argv that
    # are not UTF-8): escaped as traces escape agent text (trace/text.py), so the write cannot fail
    text = json.dumps(escape_all(info.model_dump(mode="json")), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
