"""Questions for ``groundeval serve PACK`` without ``--questions``: generated once, then cached.

The questions come from the public generator (:func:`groundeval.questions.generate.generate`),
so they are exactly what ``groundeval generate PACK --seed S`` writes. The cache file is
named by the contract digest, the seed and the groundeval version (a new release may
generate differently)::

    <cache dir>/questions/<contract digest>-seed<seed>-v<version>.json

The cache dir is ``--questions-cache`` when given, else ``$GROUNDEVAL_CACHE_DIR``, else
``$XDG_CACHE_HOME/groundeval``, else ``~/.cache/groundeval``. A cache file that cannot be
read, or that belongs to another contract or seed, is regenerated; a cache that cannot be
written is reported and the questions are served anyway. ``groundeval score TRACES --pack
PACK`` finds the cached generation its traces answer (:func:`find_cached_questions`).

Where ``serve`` records traces when ``--traces`` is not given (:func:`default_traces_path`)::

    <traces dir>/<pack name>-<contract digest, 16 hex>-<seed<SEED> | q<questions sha256, 12 hex>>.jsonl

The traces dir is ``$GROUNDEVAL_TRACES_DIR``, else ``$XDG_STATE_HOME/groundeval/traces``, else
``~/.local/state/groundeval/traces`` (state, not cache: clearing a cache never loses episodes).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

CACHE_ENV = "GROUNDEVAL_CACHE_DIR"
TRACES_ENV = "GROUNDEVAL_TRACES_DIR"


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


# ---------------------------------------------------------------------------- finding them again


def find_cached_questions(
    store, question_ids: set[str], *, cache_dir: str | Path | None = None
) -> tuple[Path | None, list[Path]]:
    """The cached generation of ``store``'s pack holding every one of ``question_ids`` (the
    questions a traces file answers): (its path or None, every cached file of the pack
    looked at). Among several that do, the one of the pack's own seed first, then of this
    groundeval version, then by name: the choice never depends on the folder's order."""
    from ..questions.io import read_questions

    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "questions"
    own_seed = store.manifest.evaluation.seed
    seen: list[Path] = sorted(folder.glob(f"{store.digest}-seed*-v*.json")) if folder.is_dir() else []
    ranked = []
    for path in seen:
        m = re.fullmatch(rf"{re.escape(store.digest)}-seed(-?\d+)-v(.+)\.json", path.name)
        if m is None:
            continue
        ranked.append((int(m.group(1)) != own_seed, m.group(2) != _version(), path.name, path))
    for *_, path in sorted(ranked):
        try:
            qs = read_questions(path)
        except Exception:  # noqa: BLE001 - a damaged cache file is simply not the one
            continue
        if qs.metadata.contract_digest == store.digest and question_ids <= {q.id for q in qs.questions}:
            return path, seen
    return None, seen


# ---------------------------------------------------------------------------- where serve records traces


def default_traces_dir() -> Path:
    """Where ``serve`` appends traces when ``--traces`` is not given."""
    explicit = os.environ.get(TRACES_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_STATE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "state") / "groundeval" / "traces"


def default_traces_path(store, *, seed: int | None = None, questions_file: str | Path | None = None) -> Path:
    """The default traces file of a served question set: the pack's generated questions of
    ``seed``, or the questions file ``questions_file`` (named by a hash of its bytes)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(store.manifest.name or "pack")).strip("._") or "pack"
    if questions_file is not None:
        which = "q" + hashlib.sha256(Path(questions_file).read_bytes()).hexdigest()[:12]
    else:
        which = f"seed{store.manifest.evaluation.seed if seed is None else seed}"
    return default_traces_dir() / f"{name[:64]}-{store.digest[:16]}-{which}.jsonl"
