"""Agent specs → agents: built-in names, ``provider:model`` and ``module:factory``."""

from __future__ import annotations

import importlib
import inspect
import sys
from typing import Any, Callable

from ..errors import GroundevalError, UsageError

BUILTIN: dict[str, str] = {
    "oracle": "groundeval.agents.oracle:OracleAgent",
    "leaky": "groundeval.agents.baselines:LeakyAgent",
    "lazy": "groundeval.agents.baselines:LazyAgent",
    "keyword": "groundeval.agents.baselines:KeywordAgent",
}
PROVIDERS: dict[str, str] = {
    "openai": "groundeval.agents.openai_chat:openai_agent",
    "anthropic": "groundeval.agents.anthropic_messages:anthropic_agent",
    # named presets of OpenAI-compatible servers (groundeval.agents.presets): the openai extra
    **{
        name: f"groundeval.agents.presets:{name}"
        for name in ("vllm", "ollama", "lmstudio", "openrouter", "together", "groq")
    },
}
EXTRA_OF: dict[str, str] = {name: "openai" for name in PROVIDERS if name not in ("openai", "anthropic")}


def load_target(target: str, spec: str) -> Callable[..., Any]:
    """The object ``module:attr`` names (``target``), or a usage error naming the agent ``spec``:
    a module that is missing or fails on import (the user's code), an attribute it lacks."""
    module, _, attr = target.partition(":")
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise UsageError.single("--agent", f"cannot import {module!r} for agent {spec!r}: {exc}") from None
    except Exception as exc:  # the module itself fails (a syntax error, an error at import): the user's code
        raise UsageError.single(
            "--agent", f"cannot import {module!r} for agent {spec!r}: {type(exc).__name__}: {exc}"
        ) from None
    obj = mod
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UsageError.single("--agent", f"module {module!r} has no attribute {attr!r} (agent {spec!r})")
    return obj


def create(factory: Callable[..., Any], spec: str, *args: Any, **opts: Any) -> Any:
    """Call a factory with the options it accepts (others belong to other agent kinds); a factory
    that fails is a usage error naming ``spec`` (groundeval's own errors pass as they are)."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        opts = {k: v for k, v in opts.items() if k in params}
    try:
        return factory(*args, **opts)
    except TypeError as exc:
        raise UsageError.single("--agent", f"cannot create agent {spec!r}: {exc}") from None
    except GroundevalError:  # already says what is wrong (a missing key, an extra)
        raise
    except Exception as exc:  # the factory failed before any episode could record it
        raise UsageError.single("--agent", f"cannot create agent {spec!r}: {type(exc).__name__}: {exc}") from None


def get_agent(spec: str, **opts: Any) -> Any:
    """An agent for ``spec``:

    * ``oracle`` · ``leaky`` · ``lazy`` · ``keyword`` — the deterministic baselines;
    * ``openai:<model>`` · ``anthropic:<model>`` — LLM adapters (options: ``base_url``,
      ``api_key_env``, ``temperature``, ``max_tokens``, ``timeout``, ``retries``);
    * ``vllm:`` · ``ollama:`` · ``lmstudio:`` · ``openrouter:`` · ``together:`` · ``groq:<model>``
      — the OpenAI adapter preset for that server (``groundeval.agents.presets``);
    * ``package.module:factory`` — your own: a callable returning an object with
      ``name`` and ``run(episode)`` (an agent class works too).
    """
    spec = spec.strip()
    opts = {k: v for k, v in opts.items() if v is not None}
    if spec in BUILTIN:
        return create(load_target(BUILTIN[spec], spec), spec, **opts)
    head, sep, rest = spec.partition(":")
    if sep and head in PROVIDERS:
        if not rest:
            raise UsageError.single("--agent", f"{head!r} needs a model name, e.g. '{head}:<model>'")
        from ..extras import require

        require(EXTRA_OF.get(head, head), f"--agent {spec}")
        return create(load_target(PROVIDERS[head], spec), spec, rest, **opts)
    if sep and rest:
        if "" not in sys.path and "." not in sys.path:
            sys.path.insert(0, "")  # users' agent modules next to where they run the command
        agent = create(load_target(spec, spec), spec, **opts)
        if not callable(getattr(agent, "run", None)):
            raise UsageError.single("--agent", f"{spec!r} did not return an agent (an object with run(episode))")
        if not getattr(agent, "name", None):
            try:
                agent.name = spec
            except AttributeError:
                pass
        return agent
    known = ", ".join(sorted(BUILTIN) + [f"{p}:<model>" for p in sorted(PROVIDERS)] + ["module:factory"])
    raise UsageError.single("--agent", f"unknown agent {spec!r}; expected one of {known}")
