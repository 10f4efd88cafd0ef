"""Issue 19: the pytest plugin's no_regression item judges a drop by a paired test over
questions (``regression_test = "paired"``, the default) — noise passes, a real drop fails
and names its questions; ``alpha`` and ``regression_test`` are validated settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval.errors import ContractError
from groundeval.testing.baseline import Baseline, compare, compare_paired
from groundeval.testing.config import GateConfig, parse_table

TRACKS = {f"s{i}": "silence" for i in range(12)} | {f"p{i}": "perspective" for i in range(12)}


def _baseline(values: dict[str, float]) -> Baseline:
    by_track: dict[str, list[float]] = {}
    for q, v in values.items():
        by_track.setdefault(TRACKS[q], []).append(v)
    return Baseline(
        tracks={t: sum(v) / len(v) for t, v in by_track.items()},
        overall=sum(values.values()) / len(values),
        questions=values,
    )


def test_one_question_flipping_is_noise_for_the_paired_test_but_a_point_regression():
    base = _baseline(dict.fromkeys(TRACKS, 1.0))
    now = _baseline({**dict.fromkeys(TRACKS, 1.0), "s3": 0.0})
    assert compare(base, now, tolerance=0.05)[0]  # silence mean fell by 1/12 > 0.05
    regressions, notes = compare_paired(base, now, 0.05, 0.05, TRACKS)
    assert regressions == [] and any("not significant" in n for n in notes)


def test_a_broad_drop_is_a_paired_regression_naming_its_questions():
    base = _baseline(dict.fromkeys(TRACKS, 1.0))
    now = _baseline({q: (0.2 if q.startswith("s") else 1.0) for q in TRACKS})
    regressions, _ = compare_paired(base, now, 0.05, 0.05, TRACKS)
    assert any(r.startswith("silence: mean S_adj") and "driven by s0 (1.000 → 0.200)" in r for r in regressions)
    assert any(r.startswith("overall: mean S_adj") for r in regressions)
    assert not any(r.startswith("perspective") for r in regressions)


def test_a_baseline_without_questions_falls_back_to_point_estimates():
    base = Baseline(tracks={"silence": 1.0}, overall=1.0)
    now = _baseline(dict.fromkeys(TRACKS, 0.5))
    regressions, notes = compare_paired(base, now, 0.05, 0.05, TRACKS)
    assert regressions and "point estimates" in notes[0]


def test_settings():
    path = Path("pyproject.toml")
    assert GateConfig().regression_test == "paired" and GateConfig().alpha == 0.05
    cfg = parse_table({"alpha": 0.01, "regression_test": "point"}, path)
    assert (cfg.alpha, cfg.regression_test) == (0.01, "point")
    for bad, key in (
        ({"alpha": 0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": True}, "alpha"),
        ({"regression_test": "bayes"}, "regression_test"),
    ):
        with pytest.raises(ContractError, match=f"tool.groundeval.{key}"):
            parse_table(bad, path)
