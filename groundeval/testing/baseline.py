"""Baselines for the regression gate: adjusted scores per track and per question.

Scores are deterministic given contract and trace, so a drop against a baseline is a
change in the agent's behaviour — but an LLM agent's behaviour varies from run to run.
:func:`compare_paired` (the default, ``regression_test = "paired"``) therefore fails
only on a drop that is larger than the tolerance *and* significant in a paired test
over the questions (``groundeval.report.significance``); :func:`compare` is the
point-estimate comparison. A baseline is our own small JSON file (written with
``--groundeval-update-baseline``; it keeps S_adj per question, which the paired test
needs) or a ``report.json`` from ``groundeval report`` (per track and overall only, so
it is compared on point estimates).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ContractError

FORMAT = "groundeval-baseline/1"


class Baseline(BaseModel):
    """The baseline file (``contracts/gate_baseline.schema.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # NaN would pass every check

    format: Literal["groundeval-baseline/1"] = FORMAT
    tracks: dict[str, float] = Field(description="Mean S_adj per track.")
    overall: float | None = Field(None, description="Mean S_adj over all questions.")
    questions: dict[str, float] = Field(default_factory=dict, description="S_adj per question id.")
    contract_digest: str | None = None
    agent: str | None = None


def _mean(values: list[float]) -> float:
    return round(math.fsum(values) / len(values), 6) if values else 0.0


def summarize(scores: Iterable[Any], *, contract_digest: str | None = None, agent: str | None = None) -> Baseline:
    """Mean ``s_adj`` per track and overall from ``QuestionScore`` objects."""
    scores = sorted(scores, key=lambda s: s.question_id)
    by_track: dict[str, list[float]] = {}
    for s in scores:
        by_track.setdefault(s.track, []).append(s.s_adj)
    return Baseline(
        tracks={t: _mean(v) for t, v in sorted(by_track.items())},
        overall=_mean([s.s_adj for s in scores]) if scores else None,
        questions={s.question_id: round(s.s_adj, 6) for s in scores},
        contract_digest=contract_digest,
        agent=agent,
    )


def write_baseline(path: str | Path, baseline: Baseline) -> Path:
    """Canonical JSON (sorted keys, indent 2, trailing newline) so baselines diff well."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = baseline.model_dump(mode="json")
    path.write_text(json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _number(value: Any, path: Path, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ContractError.single(str(path), f"expected a number, got {value!r}", field=where)
    return float(value)


def read_baseline(path: str | Path) -> Baseline:
    """Read our baseline format or a ``report.json`` (RunReport)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ContractError.single(str(path), f"cannot read baseline: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ContractError.single(str(path), f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    if not isinstance(data, dict):
        raise ContractError.single(str(path), "expected a JSON object")
    if data.get("format") == FORMAT:
        try:
            return Baseline.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ContractError.single(str(path), err["msg"], field=".".join(str(p) for p in err["loc"])) from None
    if isinstance(data.get("overall"), dict) and "means" in data["overall"]:

        def s_adj(group: Any, where: str) -> float:
            return _number((group.get("means") or {}).get("s_adj"), path, f"{where}.means.s_adj")

        return Baseline(
            tracks={t: s_adj(g, f"tracks.{t}") for t, g in sorted((data.get("tracks") or {}).items())},
            overall=s_adj(data["overall"], "overall"),
            contract_digest=data.get("contract_digest"),
            agent=data.get("agent"),
        )
    raise ContractError.single(str(path), f'not a baseline: expected "format": "{FORMAT}" or a report.json')


def compare(baseline: Baseline, current: Baseline, tolerance: float) -> tuple[list[str], list[str]]:
    """(regressions, notes): a track or the overall mean below baseline - tolerance is a
    regression; the notes name the questions that dropped most, to start the diagnosis."""
    regressions, notes = [], []
    for track, base in sorted(baseline.tracks.items()):
        if track not in current.tracks:
            notes.append(f"track {track} is in the baseline but has no questions now")
            continue
        now = current.tracks[track]
        if now < base - tolerance - 1e-9:
            regressions.append(f"{track}: mean S_adj {now:.3f} < baseline {base:.3f} - tolerance {tolerance:.3f}")
    if baseline.overall is not None and current.overall is not None:
        if current.overall < baseline.overall - tolerance - 1e-9:
            regressions.append(
                f"overall: mean S_adj {current.overall:.3f} < baseline {baseline.overall:.3f}"
                f" - tolerance {tolerance:.3f}"
            )
    drops = sorted(
        (
            (baseline.questions[q] - v, q)
            for q, v in current.questions.items()
            if q in baseline.questions and baseline.questions[q] - v > tolerance
        ),
        reverse=True,
    )
    for drop, q in drops[:10]:
        notes.append(f"{q}: {baseline.questions[q]:.3f} -> {current.questions[q]:.3f} (-{drop:.3f})")
    if len(drops) > 10:
        notes.append(f"... and {len(drops) - 10} more questions dropped")
    if baseline.contract_digest and current.contract_digest and baseline.contract_digest != current.contract_digest:
        notes.append(
            "the baseline was recorded on a different contract (digest "
            f"{baseline.contract_digest[:12]} != {current.contract_digest[:12]}); refresh it "
            "with --groundeval-update-baseline if the pack changed on purpose"
        )
    return regressions, notes


def compare_paired(
    baseline: Baseline, current: Baseline, tolerance: float, alpha: float, tracks_of: dict[str, str]
) -> tuple[list[str], list[str]]:
    """(regressions, notes) from paired tests over the questions both runs scored: overall
    and per track (``tracks_of``: question id -> track), each at ``alpha / checks``
    (Bonferroni, so ``alpha`` bounds the item's false-failure rate for an unchanged agent).
    A baseline without per-question scores falls back to :func:`compare`."""
    if not baseline.questions:
        regressions, notes = compare(baseline, current, tolerance)
        return regressions, [
            "the baseline has no per-question scores (a report.json?): compared on point "
            "estimates; rewrite it with --groundeval-update-baseline for the paired test",
            *notes,
        ]
    from ..report.significance import describe, paired_test

    regressions, notes = [], []
    tracks = sorted({tracks_of[q] for q in current.questions if q in tracks_of})
    slices: list[tuple[str, str | None]] = [("overall", None)] + [(t, t) for t in tracks]
    level = alpha / len(slices)
    for name, track in slices:

        def pick(values: dict[str, float]) -> dict[str, float]:
            return {q: v for q, v in values.items() if track is None or tracks_of.get(q) == track}

        result = paired_test(pick(baseline.questions), pick(current.questions))
        if track is None and result.n == 0:  # a test over no pair proves nothing, least of all "no drop"
            regressions.append(
                "overall: no question in common with the baseline: nothing to compare (a baseline of another "
                "pack or question set? rewrite it with --groundeval-update-baseline)"
            )
            break
        ok, message = describe(name, result, tolerance=tolerance, alpha=level)
        (notes if ok else regressions).append(message)
    if baseline.contract_digest and current.contract_digest and baseline.contract_digest != current.contract_digest:
        notes.append(
            "the baseline was recorded on a different contract (digest "
            f"{baseline.contract_digest[:12]} != {current.contract_digest[:12]}); refresh it "
            "with --groundeval-update-baseline if the pack changed on purpose"
        )
    return regressions, notes
