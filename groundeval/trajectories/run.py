"""``groundeval trajectories verify``: a file of trajectories verified by replay, streamed.

Records are read one at a time (:mod:`.stream`), sent in small batches to worker processes (each
holds the world once) with a bounded number of batches in flight, and their results written in
file order as they come back — so memory stays flat however long the file is, and the outputs are
the same bytes whatever the number of workers. Outputs in ``OUT``:

* ``kept.jsonl`` / ``rejected.jsonl`` — one result per trajectory (``reasons`` each naming the
  trajectory, the step and the field); an unreadable record is rejected with its location;
* ``disagreements.jsonl`` — with labels: each trajectory whose label and verdict differ;
* ``summary.json`` — counts, reasons, shapes, and with labels the confusion matrix and
  precision / recall / F1 of "kept" against "label = 1";
* ``report.md`` — the same for a reader.

No wall-clock time is written into them (the command prints its rate on stderr).
"""

from __future__ import annotations

import csv
import json
import multiprocessing as mp
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ContractError, UsageError
from ..tasks.score import canonical_json
from .model import ReadProblem
from .shapes import read_record
from .stream import RawRecord, expand, holds_no_records, iter_records
from ..worlds.run import fingerprint, worker_source
from .verify import Verifier, load_world_named, problem_result, result_line

__all__ = ["VerifySummary", "load_labels", "verify_file"]

BATCH = 32
"""Records per batch sent to a worker."""
RAY_BATCH = 64
"""Records per batch sent to a Ray worker (one more waits in each worker's queue)."""

_WORKER: dict[str, Any] = {}


@dataclass
class VerifySummary:
    total: int = 0
    kept: int = 0
    rejected: int = 0
    unreadable: int = 0
    reasons: Counter = field(default_factory=Counter)
    shapes: Counter = field(default_factory=Counter)
    confusion: dict[str, int] = field(default_factory=lambda: {"tp": 0, "fp": 0, "fn": 0, "tn": 0})
    labelled: int = 0
    unlabelled: int = 0
    judge: str | None = None
    """The judge of natural-language assertions (``--judge``), when one was given."""
    judged: Counter = field(default_factory=Counter)
    """Trajectories the judge was asked about, by outcome: ``all_met``, ``not_met``, ``error``."""

    def metrics(self) -> dict[str, float | None]:
        c = self.confusion
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else None
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else None
        f1 = (
            2 * p * r / (p + r)
            if p is not None and r is not None and p + r
            else (0.0 if p is not None and r is not None else None)
        )
        acc = (c["tp"] + c["tn"]) / self.labelled if self.labelled else None
        return {
            "precision": _round(p),
            "recall": _round(r),
            "f1": _round(f1),
            "accuracy": _round(acc),
        }

    def to_json(self, world: str, source: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "trajectory-verification",
            "version": 1,
            "world": world,
            "source": source,
            "total": self.total,
            "kept": self.kept,
            "rejected": self.rejected,
            "unreadable": self.unreadable,
            "reasons": dict(sorted(self.reasons.items())),
            "shapes": dict(sorted(self.shapes.items())),
        }
        if self.judge is not None:
            out["judge"] = {
                "model": self.judge,
                "judged": sum(self.judged.values()),
                **{k: self.judged[k] for k in ("all_met", "not_met", "error")},
            }
        if self.labelled:
            out["labels"] = {
                "labelled": self.labelled,
                "unlabelled": self.unlabelled,
                "confusion": dict(self.confusion),
                **self.metrics(),
            }
        return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


# --------------------------------------------------------------------------- labels


def load_labels(path: str | Path) -> dict[str, float]:
    """Trajectory id -> label, from JSON Lines (``{"id", "reward" | "label"}``) or CSV (``id,label``)."""
    p = Path(path)
    out: dict[str, float] = {}
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ContractError.single(str(p), f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ContractError.single(str(p), f"not UTF-8 text (byte {exc.start})") from None
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if first.lstrip().startswith("{"):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                raise ContractError.single(str(p), f"invalid JSON: {exc}", line=n) from None
            if not isinstance(rec, dict) or "id" not in rec:
                raise ContractError.single(str(p), "a label line is an object with an id", line=n, field="id")
            out[str(rec["id"])] = _label_value(rec.get("reward", rec.get("label")), p, n)
        return out
    rows = list(csv.reader(text.splitlines()))
    start = 1 if rows and rows[0] and rows[0][0].strip().lower() in ("id", "trajectory", "trajectory_id") else 0
    for n, row in enumerate(rows[start:], start + 1):
        if not row or not any(x.strip() for x in row):
            continue
        if len(row) < 2:
            raise ContractError.single(str(p), "a label row is: id,label", line=n)
        out[row[0].strip()] = _label_value(row[1].strip(), p, n)
    return out


def _label_value(v: Any, p: Path, n: int) -> float:
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        t = v.strip().lower()
        if t in ("true", "pass", "yes", "good"):
            return 1.0
        if t in ("false", "fail", "no", "bad"):
            return 0.0
        try:
            return float(t)
        except ValueError:
            pass
    raise ContractError.single(str(p), f"a label is a number or true/false, not {v!r}", line=n, field="label")


# --------------------------------------------------------------------------- workers


def _init_worker(world_name: str | None, shape: str, judge: Any = None) -> None:
    if world_name is not None:  # a spawned worker loads the world itself
        _WORKER["verifier"] = Verifier(load_world_named(world_name), judge)
    _WORKER["shape"] = shape


def _verify_batch(batch: list[RawRecord | ReadProblem]) -> list[tuple[str, dict[str, Any]]]:
    return _verify_with((_WORKER["verifier"], _WORKER.get("shape", "auto")), batch)


def _verify_with(held: tuple[Verifier, str], batch: list[RawRecord | ReadProblem]) -> list[tuple[str, dict[str, Any]]]:
    v, shape = held
    items = [item for raw in batch for item in ([raw] if isinstance(raw, ReadProblem) else expand(raw))]
    v.prefetch(items, shape)  # the judge's requests of the batch, several at once (with a judge)
    return [_verify_one(v, item, shape) for item in items]


def _verify_one(v: Verifier, item: RawRecord | ReadProblem, shape: str) -> tuple[str, dict[str, Any]]:
    if isinstance(item, ReadProblem):
        res = problem_result(item)
    else:
        t = read_record(item, shape)
        res = problem_result(t) if isinstance(t, ReadProblem) else v.verify(t)
    brief = {
        "id": res["id"],
        "kept": res["kept"],
        "label": res["label"],
        "shape": res["shape"],
        "reasons": sorted({r["kind"] for r in res["reasons"]}),
        "judge": _judged(res.get("judge")),
    }
    return result_line(res), brief


def _judged(j: dict[str, Any] | None) -> str | None:
    if j is None:
        return None
    if j["status"] != "ok":
        return "error"
    return "all_met" if all(a["met"] for a in j["assertions"]) else "not_met"


def _batches(path: Path, size: int = BATCH) -> Iterator[list[RawRecord | ReadProblem]]:
    batch: list[RawRecord | ReadProblem] = []
    for item in iter_records(path, lazy=True):
        if holds_no_records(item):  # the file's only item: no record to verify or count
            continue
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class _Progress:
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = 0.0

    def update(self, s: VerifySummary, final: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not final and now - self.last < 0.5:
            return
        self.last = now
        rate = s.total / max(now - self.start, 1e-9)
        sys.stderr.write(
            f"\rverified {s.total:,} · kept {s.kept:,} · rejected {s.rejected:,} · {rate:,.0f}/s"
            + ("\n" if final else "")
        )
        sys.stderr.flush()


def _results(
    path: Path, world: Any, world_name: str, workers: int, shape: str, judge: Any = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    if workers <= 1:
        _WORKER["verifier"] = Verifier(world, judge)
        _WORKER["shape"] = shape
        for batch in _batches(path):
            yield from _verify_batch(batch)
        return
    preload = hasattr(world, "criteria") and "fork" in mp.get_all_start_methods()
    if preload:  # τ² worlds are plain Python objects: forked workers share the loaded world
        ctx = mp.get_context("fork")
        _WORKER["verifier"] = Verifier(world, judge)
        init_args: tuple[Any, ...] = (None, shape)
    else:  # a DuckDB world is opened by each worker itself
        ctx = mp.get_context("spawn")
        init_args = (world_name, shape, judge)
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=init_args) as pool:
        pending: deque = deque()
        for batch in _batches(path):
            pending.append(pool.submit(_verify_batch, batch))
            while len(pending) >= workers * 4:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


def _ray_setup(world_name: str, digest: str, shape: str, judge: bytes | None) -> tuple[Verifier, str]:
    """On a Ray worker, once: the world loaded (and checked to be the driver's) and its verifier."""
    import pickle
    import socket

    w = load_world_named(world_name)
    if fingerprint(w) != digest:
        raise ContractError.single(
            world_name, f"the world on Ray worker {socket.gethostname()} differs from the run's (another version?)"
        )
    return Verifier(w, None if judge is None else pickle.loads(judge)), shape


def _ray_results(
    path: Path, world: Any, world_name: str, shape: str, judge: Any, be: Any, owned: bool
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Batches of RAY_BATCH records verified on the backend's workers (each holds the world and
    its verifier once), results in file order; a batch whose worker died is verified here instead
    (verification is pure: the same lines), an error the verifier raised on a worker is raised."""
    here: list[tuple[Verifier, str]] = []

    def lost(batch: list[RawRecord | ReadProblem], failure: Any) -> list[tuple[str, dict[str, Any]]]:
        if not failure.died:
            raise failure.error
        if not here:
            here.append((Verifier(world, judge), shape))
        return _verify_with(here[0], batch)

    try:
        if not hasattr(be, "worker_jobs"):
            raise UsageError.single("--backend", f"the {be.name!r} backend cannot verify trajectories")
        sent = None if judge is None else be.pickled(judge, "--judge", "judge")
        args = (worker_source(world_name), fingerprint(world), shape, sent)
        with be.worker_jobs(_ray_setup, args, _verify_with, queued=1) as dispatch:
            for lines in dispatch.map(_batches(path, RAY_BATCH), lost):
                yield from lines
    finally:
        if owned:
            be.close()


def verify_file(
    path: str | Path,
    world: str,
    out: str | Path,
    *,
    labels: str | Path | None = None,
    workers: int | None = None,
    shape: str = "auto",
    progress: bool | None = None,
    judge: Any = None,
    judge_base_url: str | None = None,
    judge_api_key_env: str | None = None,
    judge_cache: str | Path | None = None,
    backend: Any = None,
    judge_concurrency: int | None = None,
) -> VerifySummary:
    """Verify every trajectory of ``path`` against ``world`` (a folder, a bundled world, or
    ``tau2:<domain>``) and write the outputs into ``out``.

    ``judge`` (``provider:model`` with the ``judge_*`` options, a
    :class:`~groundeval.trajectories.judge.JudgeSpec` or a model object) decides τ²'s
    natural-language assertions (:mod:`.judge`); without one they need a judge, as before.

    ``backend="ray"`` (or a backend from :func:`groundeval.distributed.get_backend`) verifies
    batches of records on Ray workers, each holding the world once; the outputs are the same
    bytes (``workers`` is then ignored: the backend has its own)."""
    from ..distributed import get_backend

    p = Path(path)
    if not p.is_file():
        raise UsageError.single("FILE", f"{p}: no such file")
    label_map = load_labels(labels) if labels is not None else None
    from .judge import make_judge

    judging = make_judge(
        judge,
        base_url=judge_base_url,
        api_key_env=judge_api_key_env,
        cache_dir=judge_cache,
        concurrency=judge_concurrency,
    )
    be = get_backend(backend)
    getattr(be, "workers", None)  # Ray: joined (or started) now, so a cluster out of reach writes nothing
    w = load_world_named(world)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    n = workers if workers is not None else (os.cpu_count() or 1)
    summary = VerifySummary(judge=None if judging is None else judging.name)
    bar = _Progress(sys.stderr.isatty() if progress is None else progress)
    with (
        open(out_dir / "kept.jsonl", "w", encoding="utf-8") as kept,
        open(out_dir / "rejected.jsonl", "w", encoding="utf-8") as rejected,
        open(out_dir / "disagreements.jsonl", "w", encoding="utf-8") as dis,
    ):
        if be.name == "local":
            results = _results(p, w, world, max(1, n), shape, judging)
        else:
            results = _ray_results(p, w, world, shape, judging, be, owned=be is not backend)
        for line, brief in results:
            summary.total += 1
            if brief["shape"] is None:
                summary.unreadable += 1
            else:
                summary.shapes[brief["shape"]] += 1
            if brief["kept"]:
                summary.kept += 1
                kept.write(line)
            else:
                summary.rejected += 1
                rejected.write(line)
            for r in brief["reasons"]:
                summary.reasons[r] += 1
            if brief.get("judge") is not None:
                summary.judged[brief["judge"]] += 1
            _count_label(summary, brief, label_map, line, dis)
            bar.update(summary)
    bar.update(summary, final=True)
    doc = summary.to_json(w.name, str(p))
    (out_dir / "summary.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out_dir / "report.md").write_text(render_report(doc), encoding="utf-8")
    return summary


def _count_label(
    s: VerifySummary, brief: dict[str, Any], label_map: dict[str, float] | None, line: str, dis: Any
) -> None:
    if brief["shape"] is None:
        return
    label = brief["label"] if label_map is None else label_map.get(str(brief["id"]))
    if label is None:
        s.unlabelled += 1
        return
    s.labelled += 1
    good = label >= 1.0
    key = ("tp" if brief["kept"] else "fn") if good else ("fp" if brief["kept"] else "tn")
    s.confusion[key] += 1
    if key in ("fp", "fn"):
        rec = json.loads(line)
        dis.write(
            canonical_json(
                {
                    "id": rec["id"],
                    "where": rec["where"],
                    "label": label,
                    "kept": rec["kept"],
                    "reasons": rec["reasons"],
                }
            )
            + "\n"
        )


def render_report(doc: dict[str, Any]) -> str:
    lines = [
        f"# Trajectory verification: {doc['source']}",
        "",
        f"World `{doc['world']}` · {doc['total']} records · kept {doc['kept']} · rejected {doc['rejected']}"
        f" (unreadable {doc['unreadable']})",
        "",
    ]
    if doc["shapes"]:
        lines += ["Shapes: " + ", ".join(f"{k} {v}" for k, v in doc["shapes"].items()), ""]
    j = doc.get("judge")
    if j:
        lines += [
            f"Judge `{j['model']}`: {j['judged']} trajectories with natural-language assertions · all met "
            f"{j['all_met']} · not met {j['not_met']} · judge errors {j['error']}",
            "",
        ]
    if doc["reasons"]:
        lines += ["| reason | trajectories |", "| --- | ---: |"]
        lines += [f"| {k} | {v} |" for k, v in doc["reasons"].items()]
        lines.append("")
    lab = doc.get("labels")
    if lab:
        c = lab["confusion"]
        lines += [
            f"Against the labels ({lab['labelled']} labelled, {lab['unlabelled']} without a label):",
            "",
            "| | label 1 | label 0 |",
            "| --- | ---: | ---: |",
            f"| kept | {c['tp']} | {c['fp']} |",
            f"| rejected | {c['fn']} | {c['tn']} |",
            "",
            f"precision {_fmt(lab['precision'])} · recall {_fmt(lab['recall'])} · F1 {_fmt(lab['f1'])}"
            f" · accuracy {_fmt(lab['accuracy'])}",
            "",
            "Disagreements are listed in disagreements.jsonl.",
            "",
        ]
    return "\n".join(lines)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"
