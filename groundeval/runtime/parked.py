"""Open episodes kept between ``groundeval serve`` processes (``serve --resume-episodes``).

A client that starts a stdio server per call (the MCP Inspector CLI does) would otherwise see
every episode end with the process that started it. With a park folder, a server that stops
leaves its open episodes there — one file per episode, named by its id — and a later server
on the same folder takes an episode back when a call names its id, then goes on recording it.

* Taking back is one atomic rename: two servers never both hold an episode.
* A parked file holds the episode's trace so far (what it was asked and answered), its
  question, mode and agent; the episode is rebuilt from the contract and that trace.
* An episode parked longer than the idle timeout is not taken back: the next server that
  starts or is asked for it writes its trace with status ``abandoned``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from ..trace.model import Trace

EPISODE_ID = re.compile(r"[0-9a-f]{32}")
SUFFIX = ".json"


class ParkedEpisodes:
    """The park folder of one traces file."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # the ids in it are capabilities

    def _path(self, episode_id: str) -> Path | None:
        return self.folder / (episode_id + SUFFIX) if EPISODE_ID.fullmatch(episode_id) else None

    def park(
        self, episode_id: str, trace: Trace, question_id: str, mode: str, agent: Any, parked_at: float | None = None
    ) -> None:
        """Leave one open episode for a later server (atomic: a reader never sees half a file)."""
        path = self._path(episode_id)
        if path is None:
            raise ValueError("not an episode id")
        record = {
            "question_id": question_id,
            "mode": mode,
            "agent": agent,
            "parked_at": time.time() if parked_at is None else parked_at,
            "trace": trace.model_dump(mode="json"),
        }
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        tmp.write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)

    def claim(self, episode_id: str) -> dict[str, Any] | None:
        """Take a parked episode (it leaves the folder), or None when there is none by that id."""
        path = self._path(episode_id)
        if path is None:
            return None
        taken = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.claim")
        try:
            os.rename(path, taken)  # atomic: of two servers, one gets it
        except FileNotFoundError:
            return None
        try:
            record = json.loads(taken.read_text(encoding="utf-8"))
            record["trace"] = Trace.model_validate(record["trace"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # damaged: left beside, never half-restored
        taken.unlink()
        return record

    def give_back(self, episode_id: str, record: dict[str, Any]) -> None:
        """Return a claimed episode this server cannot serve (another question set's)."""
        self.park(
            episode_id, record["trace"], record["question_id"], record["mode"], record["agent"], record["parked_at"]
        )

    def stale(self, idle_timeout: float | None, now: float | None = None) -> list[str]:
        """Ids of the episodes parked longer than ``idle_timeout`` seconds, in order."""
        if idle_timeout is None:
            return []
        now = time.time() if now is None else now
        out = []
        for path in sorted(self.folder.glob("*" + SUFFIX)):
            try:
                parked_at = json.loads(path.read_text(encoding="utf-8"))["parked_at"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if isinstance(parked_at, (int, float)) and now - parked_at >= idle_timeout:
                out.append(path.name[: -len(SUFFIX)])
        return out
