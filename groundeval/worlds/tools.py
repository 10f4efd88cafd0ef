"""A world's tools as an agent sees them, and the checks made before one runs.

Each tool is declared in ``world.yaml`` with its kind (read or write) and typed arguments; its
JSON Schema (``ToolDef.json_schema``) is what OpenAI / Anthropic / MCP tool specs carry and what
a call's arguments are validated against. A Python tool is a function of a module in the world
folder (``tools:refund``) or of an importable module (``package.module:function``), called as
``fn(state, **arguments)``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import weakref
from pathlib import Path
from typing import Any, Callable

from jsonschema import Draft202012Validator

from ..errors import ContractError
from .model import ToolDef

__all__ = ["ToolInfo", "argument_errors", "humanise", "load_python_tool", "tool_infos"]


class ToolInfo(dict):
    """``{"name", "kind", "description", "parameters", "annotations"}``: one tool as an agent (or an
    MCP client) sees it; ``annotations`` are MCP's read-only / destructive / idempotent hints."""


def tool_infos(tools: dict[str, ToolDef]) -> list[ToolInfo]:
    out = []
    for name in sorted(tools):
        t = tools[name]
        out.append(
            ToolInfo(
                name=name,
                kind=t.kind,
                description=t.description,
                parameters=t.json_schema(),
                annotations={
                    "readOnlyHint": t.kind == "read",
                    "destructiveHint": t.kind == "write",
                    "idempotentHint": t.kind == "read",
                },
            )
        )
    return out


_VALIDATORS: dict[int, tuple[weakref.ref[ToolDef], Draft202012Validator]] = {}


def _validator(tool: ToolDef) -> Draft202012Validator:
    """The tool's schema validator, built once per tool object; dropped when the tool is (a
    process that loads worlds again and again keeps only the live ones)."""
    key = id(tool)
    got = _VALIDATORS.get(key)
    if got is None or got[0]() is not tool:
        got = _VALIDATORS[key] = (weakref.ref(tool), Draft202012Validator(tool.json_schema()))
        weakref.finalize(tool, _VALIDATORS.pop, key, None)
    return got[1]


def argument_errors(tool: ToolDef, arguments: Any) -> list[str]:
    """What is wrong with ``arguments`` under the tool's JSON Schema (empty: nothing), sorted."""
    if not isinstance(arguments, dict):
        return ["arguments are not an object"]
    v = _validator(tool)
    if v.is_valid(arguments):
        return []
    errs = []
    for e in v.iter_errors(arguments):
        where = ".".join(str(p) for p in e.absolute_path)
        errs.append(f"{where}: {e.message}" if where else e.message)
    return sorted(errs)


def humanise(name: str) -> str:
    """``refund_order`` -> ``refund order``."""
    return name.replace("_", " ").strip()


def load_python_tool(ref: str, folder: Path, source: str, field: str) -> Callable[..., Any]:
    """The function ``ref`` names: ``module:function`` (a ``module.py`` in the world folder
    first, else an importable module)."""
    if ":" not in ref:
        raise ContractError.single(source, f"python tool {ref!r} is not 'module:function'", field=field)
    mod_name, func = ref.split(":", 1)
    local = folder / (mod_name.replace(".", "/") + ".py")
    try:
        if local.is_file():
            # one module per file and content: the same file is imported once, an edited one again
            key = str(local.resolve()).encode() + b"\0" + local.read_bytes()
            unique = "groundeval_world_" + hashlib.sha256(key).hexdigest()[:16]
            module = sys.modules.get(unique)
            if module is None:
                spec = importlib.util.spec_from_file_location(unique, local)
                assert spec is not None and spec.loader is not None
                module = importlib.util.module_from_spec(spec)
                sys.modules[unique] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[unique]  # never kept half run: the next load fails the same way
                    raise
        else:
            module = importlib.import_module(mod_name)
    except Exception as exc:  # the world's own code failed to import: a located user error
        raise ContractError.single(
            source, f"python tool {ref!r}: cannot import {mod_name!r}: {type(exc).__name__}: {exc}", field=field
        ) from None
    fn = getattr(module, func, None)
    if not callable(fn):
        raise ContractError.single(source, f"python tool {ref!r}: {mod_name} has no function {func!r}", field=field)
    return fn
