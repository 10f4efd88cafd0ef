"""One error hierarchy: every exception class groundeval defines derives from
``GroundevalError``, except the episode interrupts (``EpisodeInterrupt``, a BaseException
like KeyboardInterrupt, so an agent's ``except Exception`` cannot swallow them); flags are
``UsageError``s; one shared pydantic base."""

from __future__ import annotations

import ast
import importlib

import pytest
from test_packaging_import_graph import modules

from groundeval.errors import ContractError, EpisodeInterrupt, GroundevalError, ProviderError, UsageError


def _exception_classes() -> list[type]:
    out = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.bases:
                try:
                    module = importlib.import_module(name)
                except ImportError:  # an optional extra (mcp, httpx) that is not installed
                    continue
                cls = getattr(module, node.name, None)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    out.append(cls)
    return out


def test_every_exception_is_a_groundeval_error_or_an_episode_interrupt():
    classes = _exception_classes()
    assert ContractError in classes and EpisodeInterrupt in classes and len(classes) >= 8
    stray = [
        c.__qualname__
        for c in classes
        if not issubclass(c, GroundevalError | EpisodeInterrupt) and c is not GroundevalError
    ]
    assert stray == []
    base_only = [c.__qualname__ for c in classes if not issubclass(c, Exception)]
    assert all(issubclass(c, EpisodeInterrupt) for c in classes if not issubclass(c, Exception)), base_only


def test_the_hierarchy():
    assert issubclass(ContractError, GroundevalError) and issubclass(ProviderError, GroundevalError)
    assert issubclass(UsageError, ContractError)  # a located problem whose location is a flag
    assert not issubclass(EpisodeInterrupt, Exception)
    from groundeval.agents.http import ProviderError as Reexported
    from groundeval.agents.runner import EpisodeStopped, EpisodeTimeout

    assert Reexported is ProviderError
    assert issubclass(EpisodeTimeout, EpisodeInterrupt) and issubclass(EpisodeStopped, EpisodeInterrupt)


def test_flags_raise_usage_errors():
    from groundeval.agents.registry import get_agent

    with pytest.raises(UsageError) as info:
        get_agent("no-such-agent")
    assert info.value.problems[0].file == "--agent"


def test_one_shared_model_base():
    from groundeval.agents.runinfo import RunInfo
    from groundeval.contract.models import Manifest
    from groundeval.models import StrictModel
    from groundeval.questions.model import QuestionSet
    from groundeval.scoring.model import QuestionScore
    from groundeval.trace.model import Trace

    for model in (RunInfo, Manifest, QuestionSet, QuestionScore, Trace):
        assert issubclass(model, StrictModel), model
