"""The declarative eval file: ``groundeval.toml`` (top-level keys) or ``[tool.groundeval]`` in
``pyproject.toml`` — which packs, which agents, how, and the thresholds — read by ``groundeval
eval`` when it is given no PACK (``docs/cli.md``, "The eval file").

Every value is checked here, and a bad one is one located error (file and key, exit 2). In
``groundeval.toml`` an unknown key is an error (a typo must not silently drop a threshold); in
``pyproject.toml`` the table is shared with the pytest gate, whose own keys are left to it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ContractError

FILE = "groundeval.toml"
RUN_KEYS = ("mode", "trials", "seed", "concurrency", "timeout", "max_steps", "profile")
KEYS = (
    "pack",
    "packs",
    "agent",
    "agents",
    *RUN_KEYS,
    "out",
    "min_adjusted",
    "min_adjusted_by_track",
    "max_violation_rate",
    "allow_errors",
    "allow_empty",
)


@dataclass(frozen=True)
class EvalFile:
    path: Path
    packs: tuple[str, ...]
    agents: tuple[str, ...]
    run: dict[str, Any] = field(default_factory=dict)  # RUN_KEYS given in the file
    out: str | None = None
    min_adjusted: float | None = None
    min_adjusted_by_track: dict[str, float] = field(default_factory=dict)
    max_violation_rate: float | None = None
    allow_errors: bool = False
    allow_empty: bool = False


def find(folder: Path) -> Path | None:
    """``groundeval.toml`` in ``folder``, else its ``pyproject.toml`` when that has a
    ``[tool.groundeval]`` table naming packs; None when neither does."""
    own = folder / FILE
    if own.is_file():
        return own
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file():
        table = _read(pyproject).get("tool", {}).get("groundeval", {})
        if isinstance(table, dict) and ("packs" in table or "pack" in table):
            return pyproject
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ContractError.single(str(path), f"invalid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractError.single(str(path), f"cannot read: {exc}") from None


def load(path: Path) -> EvalFile:
    """The eval file at ``path`` (``groundeval.toml``, or a ``pyproject.toml``), checked."""
    data = _read(path)
    if path.name == "pyproject.toml":
        table, prefix, strict = data.get("tool", {}).get("groundeval"), "tool.groundeval.", False
        if not isinstance(table, dict):
            raise ContractError.single(str(path), "has no [tool.groundeval] table", field="tool.groundeval")
    else:
        table, prefix, strict = data, "", True
    return _parse(table, path, prefix, strict)


def _parse(table: dict[str, Any], path: Path, prefix: str, strict: bool) -> EvalFile:
    def fail(key: str, message: str) -> ContractError:
        return ContractError.single(str(path), message, field=f"{prefix}{key}")

    if strict:
        unknown = sorted(set(table) - set(KEYS))
        if unknown:
            raise fail(unknown[0], f"unknown key; the keys are {', '.join(KEYS)}")
    packs = _names(table, "pack", "packs", fail)
    agents = _names(table, "agent", "agents", fail)
    if not packs:
        raise fail("packs", 'the eval file names no pack (packs = ["tiny", ...])')
    if not agents:
        raise fail("agents", 'the eval file names no agent (agents = ["oracle", ...])')
    root = path.parent
    packs = tuple(str(root / p) if (root / p).exists() else p for p in packs)
    return EvalFile(
        path=path,
        packs=packs,
        agents=agents,
        run=_run_settings(table, fail),
        out=_text(table, "out", fail),
        min_adjusted=_unit(table, "min_adjusted", fail),
        min_adjusted_by_track=_by_track(table, fail),
        max_violation_rate=_unit(table, "max_violation_rate", fail),
        allow_errors=_flag(table, "allow_errors", fail),
        allow_empty=_flag(table, "allow_empty", fail),
    )


def _names(table, one: str, many: str, fail) -> tuple[str, ...]:
    if one in table and many in table:
        raise fail(one, f"give {one} or {many}, not both")
    if one in table:
        value = table[one]
        if not isinstance(value, str) or not value.strip():
            raise fail(one, f"expected a non-empty string, got {value!r}")
        return (value,)
    value = table.get(many, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(many, f"expected a list of non-empty strings, got {value!r}")
    if len(set(value)) != len(value):
        raise fail(many, "lists one name twice")
    return tuple(value)


def _run_settings(table, fail) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("trials", "concurrency", "max_steps"):
        if key in table:
            v = table[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise fail(key, f"expected an integer of at least 1, got {v!r}")
            out[key] = v
    if "seed" in table:
        if isinstance(table["seed"], bool) or not isinstance(table["seed"], int):
            raise fail("seed", f"expected an integer, got {table['seed']!r}")
        out["seed"] = table["seed"]
    if "timeout" in table:
        v = table["timeout"]
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:  # not v > 0: NaN too
            raise fail("timeout", f"expected a positive number of seconds, got {v!r}")
        out["timeout"] = float(v)
    for key, choices in (("mode", ("tool", "context", "zero-shot")), ("profile", ("default", "paper"))):
        if key in table:
            if table[key] not in choices:
                raise fail(key, f"expected one of {', '.join(choices)}, got {table[key]!r}")
            out[key] = table[key]
    return out


def _text(table, key, fail) -> str | None:
    if key not in table:
        return None
    if not isinstance(table[key], str) or not table[key].strip():
        raise fail(key, f"expected a non-empty string, got {table[key]!r}")
    return table[key]


def _unit(table, key, fail) -> float | None:
    if key not in table:
        return None
    v = table[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= float(v) <= 1.0:
        raise fail(key, f"expected a number between 0 and 1, got {v!r}")
    return float(v)


def _flag(table, key, fail) -> bool:
    if key in table and not isinstance(table[key], bool):
        raise fail(key, f"expected true or false, got {table[key]!r}")
    return bool(table.get(key, False))


def _by_track(table, fail) -> dict[str, float]:
    by = table.get("min_adjusted_by_track", {})
    if not isinstance(by, dict):
        raise fail("min_adjusted_by_track", "expected a table of track = threshold")
    return {t: _unit(by, t, lambda k, m: fail(f"min_adjusted_by_track.{k}", m)) for t in sorted(by)}  # type: ignore[misc]
