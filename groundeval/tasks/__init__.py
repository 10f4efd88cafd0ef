"""Task contracts: evaluate an agent on its own tools (roles, preconditions, evidence,
write actions), scored from observed runs with the same dual score and ``(1 - v)^2``
factor as the tracks. See ``docs/tasks.md``."""

from __future__ import annotations

from ..errors import ContractError
from .load import dump_contract, load_contract, parse_contract
from .model import TaskContract
from .score import FAILURE_CLASSES, TaskScore, Violation, canonical_json, score_run, state_hash

__all__ = [
    "FAILURE_CLASSES",
    "TaskContract",
    "TaskScore",
    "UnreviewedContract",
    "Violation",
    "canonical_json",
    "dump_contract",
    "example",
    "examples",
    "load_contract",
    "parse_contract",
    "score_contract_runs",
    "score_run",
    "state_hash",
]


class UnreviewedContract(ContractError):
    """Scoring was asked against a contract still marked ``reviewed: false``."""


def examples() -> dict[str, object]:
    """Name -> folder of the example task packs shipped with groundeval."""
    from pathlib import Path

    root = Path(__file__).resolve().parent / "examples"
    return {d.name: d for d in sorted(root.iterdir()) if (d / "task.yaml").is_file()} if root.is_dir() else {}


def example(name: str):
    """The folder of example task pack ``name`` (``support``)."""
    found = examples()
    if name not in found:
        raise ContractError.single(name, f"no example task pack of that name (examples: {', '.join(found) or 'none'})")
    return found[name]


def score_contract_runs(
    contract: TaskContract, runs, *, allow_unreviewed: bool = False, source: str = "task.yaml"
) -> list[TaskScore]:
    """Score runs against a contract; an unreviewed contract is refused unless allowed."""
    if not contract.reviewed and not allow_unreviewed:
        raise UnreviewedContract.single(
            source,
            "this contract is a draft (reviewed: false): review it and set "
            "'reviewed: true', or score anyway with --allow-unreviewed",
            field="reviewed",
        )
    return [score_run(contract, r) for r in runs]
