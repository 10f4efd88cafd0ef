"""Gate settings: ``[tool.groundeval]`` in the project's ``pyproject.toml``, overridden
by the ``--groundeval-*`` command-line options.

Kept apart from the plugin so the settings can be read, validated and tested
without pytest; bad values are a :class:`~groundeval.errors.ContractError` naming
the file and the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ContractError

# Question-level properties, in the order they are reported.
QUESTION_CHECKS: tuple[str, ...] = (
    "no_governance_violations",
    "silence_no_backed_by_coverage",
    "no_state_invalid_correct",
)
RUN_CHECKS: tuple[str, ...] = ("min_adjusted_score", "no_regression")
ALL_CHECKS: tuple[str, ...] = QUESTION_CHECKS + RUN_CHECKS


@dataclass(frozen=True)
class GateConfig:
    """Everything the gate needs to know besides the agent and the pack."""

    pack: str | None = None
    agent: str | None = None
    mode: str = "tool"
    questions: str | None = None  # a saved questions.json instead of generating
    seed: int | None = None
    max_steps: int = 30
    concurrency: int = 1
    trials: int = 1  # runs of each question; every property must hold in every trial, means over all
    profile: str = "default"  # the scoring profile (default or paper), as ``groundeval score --profile``
    timeout: float | None = None
    out: str | None = None
    checks: tuple[str, ...] = ALL_CHECKS
    min_adjusted: float | None = None  # None: the per-track items are skipped unless a track has its own
    min_adjusted_by_track: dict[str, float] = field(default_factory=dict)
    baseline: str | None = None
    tolerance: float = 0.02
    regression_test: str = "paired"  # paired: a drop must exceed the tolerance AND be significant; point: exceed
    alpha: float = 0.05  # paired: the no_regression item's false-failure rate for an unchanged agent
    allow_errors: bool = False  # errored episodes (the agent raised or timed out) fail the gate unless True
    allow_empty: bool = False  # empty episodes (no search or fetch, no answer) fail the gate unless True
    root: Path = Path(".")

    def threshold(self, track: str) -> float | None:
        return self.min_adjusted_by_track.get(track, self.min_adjusted)

    def resolve(self, value: str | None) -> Path | None:
        """A configured path, relative to the project root (where pyproject.toml lives)."""
        if value is None:
            return None
        p = Path(value)
        return p if p.is_absolute() else self.root / p

    def with_overrides(self, **values: Any) -> "GateConfig":
        return replace(self, **{k: v for k, v in values.items() if v is not None})


_INT_KEYS = ("seed", "max_steps", "concurrency", "trials")
_STR_KEYS = ("pack", "agent", "mode", "questions", "out", "baseline", "regression_test", "profile")


def _fail(path: Path, key: str, message: str) -> ContractError:
    return ContractError.single(str(path), message, field=f"tool.groundeval.{key}")


def _unit(path: Path, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise _fail(path, key, f"expected a number between 0 and 1, got {value!r}")
    return float(value)


def parse_table(table: dict[str, Any], path: Path) -> GateConfig:
    """Validate a ``[tool.groundeval]`` table. Keys the gate does not use are left for
    other groundeval commands and ignored here."""
    values: dict[str, Any] = {"root": path.parent}
    for step in (_strings, _integers, _numbers, _booleans, _by_track, _checks):
        values.update(step(table, path))
    _choices(values, path)
    return GateConfig(**values)


def _strings(table: dict[str, Any], path: Path) -> dict[str, Any]:
    out = {}
    for key in _STR_KEYS:
        if key in table:
            if not isinstance(table[key], str) or not table[key].strip():
                raise _fail(path, key, f"expected a non-empty string, got {table[key]!r}")
            out[key] = table[key]
    return out


def _integers(table: dict[str, Any], path: Path) -> dict[str, Any]:
    out = {}
    for key in _INT_KEYS:
        if key in table:
            if isinstance(table[key], bool) or not isinstance(table[key], int) or table[key] < 0:
                raise _fail(path, key, f"expected a non-negative integer, got {table[key]!r}")
            out[key] = table[key]
    return out


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)


def _numbers(table: dict[str, Any], path: Path) -> dict[str, Any]:
    out = {key: _unit(path, key, table[key]) for key in ("min_adjusted", "tolerance") if key in table}
    if "alpha" in table:
        a = table["alpha"]
        if not _number(a) or not 0.0 < float(a) < 1.0:
            raise _fail(path, "alpha", f"expected a number strictly between 0 and 1, got {a!r}")
        out["alpha"] = float(a)
    if "timeout" in table:
        if not _number(table["timeout"]) or not table["timeout"] > 0:  # not > 0: NaN too
            raise _fail(path, "timeout", f"expected a positive number of seconds, got {table['timeout']!r}")
        out["timeout"] = float(table["timeout"])
    return out


def _booleans(table: dict[str, Any], path: Path) -> dict[str, Any]:
    out = {}
    for key in ("allow_errors", "allow_empty"):
        if key in table:
            if not isinstance(table[key], bool):
                raise _fail(path, key, f"expected true or false, got {table[key]!r}")
            out[key] = table[key]
    return out


def _by_track(table: dict[str, Any], path: Path) -> dict[str, Any]:
    by_track = table.get("min_adjusted_by_track", {})
    if not isinstance(by_track, dict):
        raise _fail(path, "min_adjusted_by_track", "expected a table of track = threshold")
    if not by_track:
        return {}
    from ..tracks import names

    known = names()
    out = {}
    for track, value in by_track.items():
        if track not in known:
            raise _fail(
                path, f"min_adjusted_by_track.{track}", f"unknown track {track!r}; expected one of {', '.join(known)}"
            )
        out[track] = _unit(path, f"min_adjusted_by_track.{track}", value)
    return {"min_adjusted_by_track": out}


def _checks(table: dict[str, Any], path: Path) -> dict[str, Any]:
    if "checks" not in table:
        return {}
    checks = table["checks"]
    if not isinstance(checks, list) or any(c not in ALL_CHECKS for c in checks):
        raise _fail(path, "checks", f"expected a list drawn from {', '.join(ALL_CHECKS)}, got {checks!r}")
    return {"checks": tuple(c for c in ALL_CHECKS if c in checks)}


def _choices(values: dict[str, Any], path: Path) -> None:
    if "regression_test" in values and values["regression_test"] not in ("paired", "point"):
        raise _fail(path, "regression_test", f"expected paired or point, got {values['regression_test']!r}")
    if "mode" in values and values["mode"] not in ("tool", "context", "zero-shot"):
        raise _fail(path, "mode", f"expected tool, context or zero-shot, got {values['mode']!r}")
    if "trials" in values and values["trials"] < 1:
        raise _fail(path, "trials", f"expected at least 1, got {values['trials']!r}")
    if "profile" in values:
        from ..scoring.profiles import PROFILES

        if values["profile"] not in PROFILES:
            raise _fail(path, "profile", f"expected one of {', '.join(PROFILES)}, got {values['profile']!r}")


def load_config(root: Path) -> GateConfig:
    """Read ``root/pyproject.toml`` (a missing file or table means the defaults)."""
    path = Path(root) / "pyproject.toml"
    if not path.is_file():
        return GateConfig(root=Path(root))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ContractError.single(str(path), f"invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("groundeval", {})
    if not isinstance(table, dict):
        raise _fail(path, "", "expected a table")
    return parse_table(table, path)
