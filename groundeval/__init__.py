"""groundeval: prove whether a tool-using agent reached its answer validly.

The Python API mirrors the data flow ``contract -> Store -> graph -> questions ->
runtime -> traces -> scores -> report``; the CLI is a thin layer over it.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import ContractError, Problem


def __getattr__(name: str):
    # Lazy: the pytest plugin (groundeval.testing.plugin) is imported in every pytest
    # run of a project that installs groundeval; it must not pull in DuckDB and pydantic.
    if name == "Store":
        from .store.store import Store

        return Store
    raise AttributeError(f"module 'groundeval' has no attribute {name!r}")

__all__ = ["ContractError", "Problem", "Store", "__version__"]
