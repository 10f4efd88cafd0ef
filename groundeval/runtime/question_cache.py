"""Questions for ``groundeval serve PACK`` without ``--questions``: generated once, then cached.

The questions come from the public generator (:func:`groundeval.questions.generate.generate`),
so they are exactly what ``groundeval generate PACK --seed S`` writes. The cache file is
named by the contract digest, the seed and the groundeval version (a new release may
generate differently)::

    <cache dir>/questions/<contract digest>-seed<seed>-v<version>.json

The cache dir is ``--questions-cache`` when given, else ``$GROUNDEVAL_CACHE_DIR``, else
``$XDG_CACHE_HOME/groundeval``, else ``~/.cache/groundeval``. A cache file that cannot be
read, or that belongs to another contract or seed, is regenerated; a cache that cannot be
written is reported and the questions are served anyway.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

CACHE_ENV = "GROUNDEVAL_CACHE_DIR"


def default_cache_dir() -> Path:
    """Where cached questions go when ``--questions-cache`` is not given."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "groundeval"


def _version() -> str:
    from .. import __version__

    return __version__


def cache_path(cache_dir: Path, digest: str, seed: int) -> Path:
    return Path(cache_dir) / "questions" / f"{digest}-seed{seed}-v{_version()}.json"


@dataclass
class Served:
    """The question set to serve, where it is cached, and whether the cache already held it."""

    questions: object  # QuestionSet
    path: Path | None
    hit: bool


def cached_questions(
    store,
    *,
    seed: int | None = None,
    cache_dir: str | Path | None = None,
    report: Callable[[str], None] = lambda _m: None,
) -> Served:
    """The pack's generated questions for ``seed`` (default: the pack's own seed), from the
    cache when it holds them, else generated and written there."""
    from ..questions.generate import generate
    from ..questions.io import read_questions, write_questions

    seed = store.manifest.evaluation.seed if seed is None else seed
    path = cache_path(Path(cache_dir) if cache_dir is not None else default_cache_dir(), store.digest, seed)
    if path.is_file():
        try:
            qs = read_questions(path)
        except Exception as exc:  # noqa: BLE001 - a damaged cache file is regenerated, never fatal
            report(f"the cached questions {path} cannot be read ({type(exc).__name__}); regenerating")
        else:
            if qs.metadata.contract_digest == store.digest and qs.metadata.seed == seed:
                return Served(qs, path, True)
            report(f"the cached questions {path} belong to another contract or seed; regenerating")
    qs = generate(store, seed=seed)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        os.close(fd)
        try:
            write_questions(qs, tmp)
            os.replace(tmp, path)  # atomic: concurrent servers never read half a file
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError as exc:
        report(f"could not cache the questions in {path.parent} ({exc.strerror or exc}); serving them uncached")
        return Served(qs, None, False)
    return Served(qs, path, False)
