"""The original GroundEval release's question generator, run beside ours by ``bench --matrix``.

The original release (``tenurehq/GroundEval``, not on PyPI) imports as ``groundeval`` too, so it
cannot share our process or environment: the matrix runs it with another Python, given by
``--original-python``, in whose environment ``import groundeval.question_gen`` is the original's.
Its command is ``python -P -m groundeval generate --config CONFIG --events EVENTS``; it reads
``artifacts_dir`` and writes into ``output_dir`` (both from the config) and ``logs/`` in its
working directory.

An original-format pack written by ``groundeval synth`` uses a few shapes the original's config
reader does not take (actors with role windows or attributes, silence joins keyed
``trigger``/``response``, top-level keys its check rejects). :func:`original_config` writes an
equivalent config it can read, beside the run, so both generators read the same events and
the same artifact files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

# The top-level keys the original release's config check accepts (it rejects any other key).
ORIGINAL_CONFIG_KEYS = frozenset(
    {
        "output_dir",
        "artifacts_dir",
        "use_event_log_policy",
        "actors",
        "roles",
        "provider",
        "provider_path",
        "model",
        "api_key",
        "api_key_env",
        "base_url",
        "temperature",
        "max_tokens",
        "max_retries",
        "llm_question_prose",
        "llm_model",
        "perspective",
        "perspective_actors",
        "causal_links",
        "silence_pairs",
        "easy_ratio",
        "medium_ratio",
        "hard_ratio",
        "max_perspective_questions",
        "max_counterfactual_questions",
        "max_silence_questions",
        "max_questions_per_actor",
        "max_questions_per_event_type",
        "max_links_per_spec",
        "trivial_search_space",
        "seed",
    }
)

# Run by the candidate interpreter (``-P``: the working directory is not on its path, so our own
# checkout cannot answer for it): the original's generator is importable there, and it is not ours.
_PROBE = (
    "import groundeval.question_gen as q, groundeval.run as r; q.QuestionGenerator; r.cmd_generate; print(q.__file__)"
)


def original_unavailable(python: str | None, *, timeout: float = 60.0) -> str | None:
    """Why ``python`` cannot run the original generator, or None when it can."""
    if not python:
        return "no --original-python given"
    try:
        r = subprocess.run(
            [python, "-P", "-c", _PROBE], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{python}: {exc}"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return f"{python}: the original groundeval is not importable ({last[:200]})"
    return None


def _role(value: Any) -> Any:
    """One role name for the original's ``actors`` mapping (actor -> role): a role window list
    gives its first window's role, a mapping its ``role``."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        return value.get("role")
    return value


def _join(conds: Any) -> Any:
    """Join conditions as the original reads them (``cause``/``effect``; ours may say
    ``trigger``/``response`` in a silence pair)."""
    if not isinstance(conds, list):
        return conds
    out = []
    for c in conds:
        if isinstance(c, dict) and "cause" not in c and "trigger" in c:
            c = {"cause": c["trigger"], "effect": c.get("response")}
        out.append(c)
    return out


def original_config(pack: Path, out_dir: Path, *, source: str = "config.yaml") -> Path:
    """Write ``out_dir/config.yaml``: the pack's config as the original generator reads it, with
    ``artifacts_dir`` absolute (the pack's) and ``output_dir`` = ``out_dir/eval_output``."""
    pack = Path(pack).resolve()
    cfg = yaml.safe_load((pack / source).read_text(encoding="utf-8")) or {}
    new = {k: v for k, v in cfg.items() if k in ORIGINAL_CONFIG_KEYS}
    new["actors"] = {a: _role(v) for a, v in (cfg.get("actors") or {}).items()}
    new["silence_pairs"] = [
        {**sp, "join": _join(sp["join"])} if isinstance(sp, dict) and "join" in sp else sp
        for sp in cfg.get("silence_pairs") or []
    ]
    art = cfg.get("artifacts_dir") or "artifacts"
    new["artifacts_dir"] = str((pack / art).resolve())
    new["output_dir"] = str((out_dir / "eval_output").resolve())
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "config.yaml"
    path.write_text(yaml.safe_dump(new, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def original_generate_cmd(python: str, pack: Path, events: Path, out_dir: Path) -> list[str]:
    """The original generator's command on ``pack`` (run it with ``out_dir`` as working directory)."""
    config = original_config(pack, out_dir).resolve()
    events = Path(events).resolve()
    return [python, "-P", "-m", "groundeval", "generate", "--config", str(config), "--events", str(events)]
