"""Traces on disk: one canonical JSON line per episode, appended durably.

Canonical = sorted keys, no insignificant whitespace, UTF-8; each append is flushed
and fsynced so a crash loses at most the episode in flight, never a half line
read back as a trace.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from pydantic import ValidationError

from ..errors import ContractError
from .model import Trace

_APPEND_LOCK = threading.Lock()


def trace_line(trace: Trace) -> str:
    """The canonical JSON text of one trace (no trailing newline)."""
    return json.dumps(trace.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def append_trace(path: str | Path, trace: Trace) -> None:
    """Append one trace line to ``path`` (created with its folder if missing), flush and fsync."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (trace_line(trace) + "\n").encode("utf-8")
    with _APPEND_LOCK, open(path, "ab") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def read_traces(path: str | Path) -> list[Trace]:
    """Every trace in a JSONL file, in file order; a bad line is a located ContractError."""
    path = Path(path)
    if not path.exists():
        raise ContractError.single(str(path), "no such traces file")
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(Trace.model_validate_json(line))
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err.get("loc", ())) or None
                raise ContractError.single(str(path), err.get("msg", "invalid trace"), line=n, field=field) from None
    return out
