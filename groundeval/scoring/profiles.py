"""Scoring profiles: which formulas turn a trace into scores.

* ``default`` — groundeval's own formulas (``docs/scoring.md``): the pure
  :func:`groundeval.scoring.score.score`, ``S_adj = S * (1 - v)^2`` per question with
  ``v`` over every flagged call. Its outputs never change when another profile exists.
* ``paper`` — the formulas of the original GroundEval release (the preprint's numbers):
  each track's answer and trajectory terms as that release computed them, the
  per-question score is the weighted sum **without** the compliance factor, and the
  factor ``(1 - v)^2`` is applied only at run level (per track and overall) with ``v``
  = calls that broke the actor's visibility cone / search-and-fetch calls. Only
  Perspective questions can break that gate in the original release, so only the
  Perspective track and the overall figure carry a factor there; the same holds here
  because the factor is computed from the calls' own flags (``docs/scoring.md``,
  "Scoring profiles").

A profile's per-track formulas live in the track's package: the module ``<profile>`` beside
the track's ``track`` module (``groundeval/tracks/perspective/paper.py`` holds the
Perspective formulas of ``paper``); a track declared in a module of another name has them
in ``<its module>_<profile>``. Found through the track registry — nothing here names a
track. A track without such a module is scored by its default components, combined the
profile's way (for ``paper``: no per-question factor).

:func:`score` is pure like the default scorer: same question, trace, config and
profile, same bytes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..contract.models import ScoringConfig
from ..trace.model import Trace
from .model import QuestionScore
from .score import score as default_score
from .score import retrieval_count, void_reason, voided

if TYPE_CHECKING:
    from ..questions.model import Question

DEFAULT = "default"
PAPER = "paper"
PROFILES = (DEFAULT, PAPER)
FETCH, SEARCH = "fetch_artifact", "search_artifacts"
PAPER_DIGITS = 4  # the original release rounds answer, trajectory and combined scores to 4 decimals
PAPER_VALID_TRAJECTORY = 0.7  # the original's threshold for a "valid" trajectory (valid_answer_rate)


def check(name: str | None) -> str:
    """The profile name (``default`` for None); an unknown one is a ``ValueError`` naming the known."""
    name = name or DEFAULT
    if name not in PROFILES:
        raise ValueError(f"unknown scoring profile {name!r}; expected one of {', '.join(PROFILES)}")
    return name


# --------------------------------------------------------------------------- the paper's view of a trace


@dataclass(frozen=True)
class PaperCall:
    """One search or fetch as the original release's runtime recorded it."""

    tool: str
    result_ids: tuple[str, ...]
    horizon: bool  # the call broke the time horizon
    subsystem: bool  # a subsystem the actor's role lacks (argument or artifact)
    actor_gate: bool  # the artifact was outside the actor's visibility cone
    empty: bool  # nothing came back (a dead end)


@dataclass
class PaperPath:
    """What the original release's scorers read from a trajectory."""

    mode: str
    calls: list[PaperCall] = field(default_factory=list)
    cited: list[str] = field(default_factory=list)  # context mode: the answer's evidence ids
    context_ids: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.calls)

    def count(self, attr: str) -> int:
        return sum(1 for c in self.calls if getattr(c, attr))

    def discipline(self, attr: str) -> float:
        """``1 - (calls with the flag) / calls``; 1 without calls."""
        return 1.0 - self.count(attr) / self.n if self.n else 1.0

    @property
    def retrieved(self) -> set[str]:
        """Every id any call returned (search hits included), plus the cited ids."""
        out = {i for c in self.calls for i in c.result_ids}
        out.update(self.cited)
        return out

    @property
    def dead_end_recovery(self) -> float:
        """Dead ends followed at once by a call that returned something / dead ends (1 without any)."""
        dead = sum(1 for c in self.calls if c.empty)
        if not dead:
            return 1.0
        recovered = sum(1 for a, b in zip(self.calls, self.calls[1:]) if a.empty and not b.empty)
        return recovered / dead


def paper_path(trace: Trace) -> PaperPath:
    """The original release's reading of our trace (documented in docs/scoring.md):

    * calls = the ``search_artifacts`` and ``fetch_artifact`` calls (its runtime did not
      record ``submit_answer``); ``result_ids`` = what our runtime returned (a refused
      fetch returned nothing, so it is a dead end);
    * horizon / subsystem flags are ours; the **actor gate** (its visibility cone) is
      broken by a call flagged ``actor``, and by a fetch flagged ``subsystem`` (an
      artifact of a subsystem the role lacks lies outside the cone); a search naming
      such a subsystem is a subsystem violation only, as in the original;
    * cited ids (context mode only) = the answer's ``evidence_artifacts``.
    """
    path = PaperPath(mode=trace.mode, context_ids=list(trace.context_ids))
    for c in trace.calls:
        if c.tool not in (FETCH, SEARCH):
            continue
        flags = set(c.flags)
        sub = "subsystem" in flags
        path.calls.append(
            PaperCall(
                tool=c.tool,
                result_ids=tuple(c.result_ids),
                horizon="horizon" in flags,
                subsystem=sub,
                actor_gate="actor" in flags or (sub and c.tool == FETCH),
                empty=not c.result_ids,
            )
        )
    if trace.mode == "context" and isinstance(trace.final_answer, dict):
        ev = trace.final_answer.get("evidence_artifacts")
        if isinstance(ev, list):
            path.cited = [str(x) for x in ev if isinstance(x, (str, int))]
    return path


# readers with the original release's tolerance (strings "true"/"yes"/"false"/"no")
def paper_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("true", "yes"):
            return True
        if v in ("false", "no"):
            return False
    return None


def paper_set(value: Any) -> set[str]:
    if isinstance(value, (list, tuple, set)):
        return {str(v) for v in value if v is not None}
    if value:
        return {str(value)}
    return set()


def paper_label(value: Any) -> str:
    """The original's label normalisation: case-folded, '-' and ' ' read as '_'."""
    return str(value if value is not None else "").strip().lower().replace("-", "_").replace(" ", "_")


def r4(x: float) -> float:
    return round(x, PAPER_DIGITS)


@dataclass(frozen=True)
class ProfileScore:
    """A track's verdict under a profile, before combination."""

    answer_components: dict[str, float]
    s_answer: float
    correct: bool
    traj_components: dict[str, float]
    s_traj: float


Formula = Callable[[Any, Any, "dict[str, Any] | None", PaperPath, ScoringConfig], ProfileScore]


# --------------------------------------------------------------------------- formula lookup


_FORMULAS: dict[tuple[str, str], Formula | None] = {}


def formula(profile: str, track_name: str) -> Formula | None:
    """The track's ``score`` function for ``profile``, from its package (``<package>.<profile>``
    when the track is declared in ``<package>.track``, else ``<track module>_<profile>``);
    None when the track has none."""
    key = (profile, track_name)
    if key not in _FORMULAS:
        from ..tracks import get

        _FORMULAS[key] = _profile_score(profile_module(type(get(track_name)).__module__, profile))
    return _FORMULAS[key]


def profile_module(track_module: str, profile: str) -> str:
    """Where a track declared in ``track_module`` keeps its formulas for ``profile``."""
    package, _, last = track_module.rpartition(".")
    return f"{package}.{profile}" if package and last == "track" else f"{track_module}_{profile}"


def _profile_score(module: str) -> Formula | None:
    try:
        return getattr(importlib.import_module(module), "score", None)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None


# --------------------------------------------------------------------------- scoring


def score(
    question: Question, trace: Trace, config: ScoringConfig | None = None, profile: str | None = None
) -> QuestionScore:
    """Score one trace under ``profile`` (default: groundeval's formulas). Pure."""
    base = default_score(question, trace, config)
    if profile is None or profile == DEFAULT:
        return base
    check(profile)
    paper = _paper(question, trace, config or ScoringConfig(), base)
    reason = void_reason(trace.status, trace.mode, retrieval_count(trace.calls), paper.answered)
    if reason is None:
        return paper
    return paper.model_copy(update=voided(paper.model_dump(), reason))


def _weights(config: ScoringConfig, track: str) -> tuple[float, float]:
    w = config.weights.get(track)
    if w is None:
        from ..tracks import get

        return get(track).default_weights
    return w.answer, w.trajectory


def _paper(question: Question, trace: Trace, config: ScoringConfig, base: QuestionScore) -> QuestionScore:
    path = paper_path(trace)
    answer = trace.final_answer if isinstance(trace.final_answer, dict) else None
    fn = formula(PAPER, question.track)
    if fn is not None:
        ps = fn(question, question.ground_truth, answer, path, config)
    else:  # a track the original release did not have: its own components, combined the paper's way
        ps = ProfileScore(base.answer_components, base.s_answer, base.answer_correct, base.traj_components, base.s_traj)
    w_a, w_t = _weights(config, question.track)
    s_answer = r4(ps.s_answer) if answer is not None else 0.0
    correct = ps.correct and answer is not None
    s_traj = r4(ps.s_traj)
    combined = r4(w_a * s_answer + w_t * s_traj)
    actor = path.count("actor_gate")
    n = path.n
    path_valid = s_traj >= PAPER_VALID_TRAJECTORY
    valid = correct and path_valid
    if valid:
        failure_class = "pass"
    elif not base.answered:
        failure_class = "no_answer"
    elif correct:
        failure_class = "state_invalid_correct"
    else:
        failure_class = "wrong_answer"
    return base.model_copy(
        update={
            "profile": PAPER,
            "s_answer": s_answer,
            "s_traj": s_traj,
            "s_combined": combined,
            "violation_rate": round(actor / n, 10) if n else 0.0,
            "penalty": 1.0,
            "s_adj": combined,
            "answer_components": {k: round(x, 10) for k, x in ps.answer_components.items()},
            "traj_components": {k: round(x, 10) for k, x in ps.traj_components.items()},
            "answer_correct": correct,
            "path_valid": path_valid,
            "valid_answer": valid,
            "state_invalid_correct": correct and not path_valid,
            "failure_class": failure_class,
            "v_units": n,
            "v_bad": actor,
        }
    )
