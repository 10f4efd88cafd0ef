"""An opt-in, content-addressed cache of provider responses (``--cache DIR``).

The key is the SHA-256 of the request as sent — the server's base URL, the path and the JSON
payload (model, messages, tools, sampling settings), in canonical form — never the API key.
The value is the response body the server returned with a 2xx status, kept as canonical JSON in
``DIR/<first two hex digits>/<key>.json``. A request whose key is there is answered from the file
without any network call, so replaying a run (to re-score it after a scorer change, to debug, in
CI) costs nothing and gives byte-identical traces: the same bodies in the same order make the
same episodes. Errors and retries are never cached. Writes are atomic (a temporary file, then a
rename), so concurrent episodes and an interrupted run never leave half a response.

A sampled response (temperature > 0) is cached like any other: a replay gives the first sample
again. That is the point of a replay; for fresh samples, run without ``--cache`` (or with a new
folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


class ResponseCache:
    """Responses by request digest, in one folder (created on first write)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.hits = 0
        self.misses = 0

    def key(self, base_url: str, path: str, payload: dict[str, Any]) -> str:
        request = {"base_url": base_url.rstrip("/"), "path": path.lstrip("/"), "payload": payload}
        return hashlib.sha256(canonical(request)).hexdigest()

    def _file(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> tuple[dict[str, Any], dict[str, int]] | None:
        """The cached ``(body, info)`` — info as the live request reported it (attempts, retries),
        so a replay records what the original run recorded — or None: a missing or unreadable
        entry is a miss, never an error."""
        try:
            entry = json.loads(self._file(key).read_bytes())
        except (OSError, ValueError):
            entry = None
        ok = isinstance(entry, dict) and isinstance(entry.get("body"), dict) and isinstance(entry.get("info"), dict)
        if not ok:
            self.misses += 1
            return None
        self.hits += 1
        return entry["body"], entry["info"]

    def put(self, key: str, body: dict[str, Any], info: dict[str, int]) -> None:
        """Keep a 2xx body (a body JSON cannot hold canonically, such as NaN, is not kept)."""
        try:
            data = canonical({"body": body, "info": info})
        except ValueError:
            return
        target = self._file(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def open_cache(folder: str | Path | None) -> ResponseCache | None:
    """The cache in ``folder`` (None: no cache)."""
    return None if folder is None else ResponseCache(folder)
