"""groundeval: prove whether a tool-using agent reached its answer validly.

The Python API mirrors the data flow ``contract -> Store -> graph -> questions ->
runtime -> traces -> scores -> report``; the CLI is a thin layer over it::

    import groundeval

    contract = groundeval.load("tiny")            # a bundled pack, a folder or a manifest
    findings = groundeval.verify("tiny")
    questions = groundeval.generate(contract)
    result = groundeval.evaluate("tiny", "oracle", "out/")   # verify → … → report, in one call

Everything is imported on first use: ``import groundeval`` stays cheap (the pytest plugin
imports it in every test run of a project that installs groundeval).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import ContractError, GroundevalError, Problem, ProviderError, UsageError

__version__ = "0.1.0"

# public name -> "module:attribute", imported on first access
_LAZY: dict[str, str] = {
    # the workflow
    "load": "groundeval.api:load",
    "verify": "groundeval.api:verify",
    "generate": "groundeval.api:generate",
    "run": "groundeval.api:run",
    "score": "groundeval.api:score",
    "report": "groundeval.report:",  # the package, callable as the step (groundeval.api.report)
    "evaluate": "groundeval.api:evaluate",
    "EvalResult": "groundeval.api:EvalResult",
    # core types
    "Contract": "groundeval.store.store:Store",  # a loaded evaluation contract
    "Store": "groundeval.store.store:Store",
    "Manifest": "groundeval.contract.models:Manifest",
    "Question": "groundeval.questions.model:Question",
    "QuestionSet": "groundeval.questions.model:QuestionSet",
    "Trace": "groundeval.trace.model:Trace",
    "Episode": "groundeval.runtime.episode:Episode",
    "Agent": "groundeval.agents.base:Agent",
    "QuestionScore": "groundeval.scoring.model:QuestionScore",
    "RunReport": "groundeval.scoring.model:RunReport",
    "Track": "groundeval.tracks:Track",
    "BaseTrack": "groundeval.tracks:BaseTrack",
    "register_track": "groundeval.tracks:register",
    # task contracts for an agent's own tools (docs/tasks.md)
    "TaskContract": "groundeval.tasks.model:TaskContract",
    "TaskScore": "groundeval.tasks.score:TaskScore",
    "ObservedRun": "groundeval.observe.model:ObservedRun",
}

__all__ = [
    "Agent",
    "BaseTrack",
    "Contract",
    "ContractError",
    "Episode",
    "EvalResult",
    "GroundevalError",
    "Manifest",
    "ObservedRun",
    "Problem",
    "ProviderError",
    "Question",
    "QuestionScore",
    "QuestionSet",
    "RunReport",
    "Store",
    "TaskContract",
    "TaskScore",
    "Trace",
    "Track",
    "UsageError",
    "__version__",
    "evaluate",
    "generate",
    "load",
    "register_track",
    "report",
    "run",
    "score",
    "verify",
]

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from .agents.base import Agent
    from .api import EvalResult, evaluate, generate, load, run, score, verify
    from .contract.models import Manifest
    from .observe.model import ObservedRun
    from .questions.model import Question, QuestionSet
    from .runtime.episode import Episode
    from .scoring.model import QuestionScore, RunReport
    from .store.store import Store
    from .store.store import Store as Contract
    from .tasks.model import TaskContract
    from .tasks.score import TaskScore
    from .trace.model import Trace
    from .tracks import BaseTrack, Track
    from .tracks import register as register_track


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'groundeval' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = importlib.import_module(module)
    value = getattr(value, attr) if attr else value
    globals()[name] = value  # next access skips this hook
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
