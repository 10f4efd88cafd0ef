"""groundeval: prove whether a tool-using agent reached its answer validly.

The Python API mirrors the data flow ``contract -> Store -> graph -> questions ->
runtime -> traces -> scores -> report``; the CLI is a thin layer over it.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import ContractError, Problem
from .store.store import Store

__all__ = ["ContractError", "Problem", "Store", "__version__"]
