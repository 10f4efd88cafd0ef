"""User-facing errors: one message naming file, line/record and field.

User mistakes raise :class:`ContractError`; the CLI prints it and exits 2 with no
traceback. Agent misbehaviour is never an exception (it is recorded in traces).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Problem:
    """One located problem in the user's input."""

    file: str
    message: str
    line: int | None = None
    record: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.record is not None:
            where += f" (record {self.record})"
        if self.field:
            where += f" field '{self.field}'"
        return f"{where}: {self.message}"


@dataclass
class ContractError(Exception):
    """Bad user input. Carries every problem found (at least one)."""

    problems: list[Problem] = field(default_factory=list)

    @classmethod
    def single(cls, file: str, message: str, **where) -> "ContractError":
        return cls([Problem(file=str(file), message=message, **where)])

    def __str__(self) -> str:
        shown = self.problems[:20]
        lines = [str(p) for p in shown]
        if len(self.problems) > len(shown):
            lines.append(f"... and {len(self.problems) - len(shown)} more problems")
        return "\n".join(lines)
