"""groundeval's errors: one hierarchy, one message each.

::

    GroundevalError                 anything groundeval raises on purpose (the CLI: message, exit 2)
    ├── ContractError               bad user input: every problem, located (file, line/record, field)
    │   └── UsageError              a command-line flag or API argument (the "file" is the flag)
    ├── ProviderError               an LLM provider could not answer (after retries); ``fatal`` stops a run
    └── ...                         the MCP hub's routing errors, prose rejections, gate failures

    EpisodeInterrupt (BaseException)  stops an agent's episode from outside, like a signal

Agent misbehaviour is never an exception: it is recorded in traces and scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ContractError", "EpisodeInterrupt", "GroundevalError", "Problem", "ProviderError", "UsageError"]


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


class GroundevalError(Exception):
    """Base of every error groundeval raises on purpose."""


@dataclass
class ContractError(GroundevalError):
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


class UsageError(ContractError):
    """A command-line flag or API argument the user got wrong: ``UsageError.single("--agent", ...)``.

    A located problem like any other (its location is the flag), so whatever reports a
    :class:`ContractError` reports it too; catch it first to tell the two apart."""


class ProviderError(GroundevalError):
    """An LLM provider could not produce a completion (after retries).

    ``fatal`` marks errors that will not go away by retrying another episode (bad key,
    unknown model or endpoint): the runner stops the run on them."""

    def __init__(self, message: str, *, status: int | None = None, fatal: bool = False):
        super().__init__(message)
        self.status = status
        self.fatal = fatal


class EpisodeInterrupt(BaseException):  # noqa: N818 - named for what it does, like KeyboardInterrupt
    """Stops an agent's episode from outside — its deadline passed, or the run was told to stop
    (Ctrl-C) — raised into the agent at its next tool call.

    A ``BaseException`` for the same reason ``KeyboardInterrupt`` is one: it acts like a signal
    on the agent's code, and an agent's own ``except Exception`` must not swallow it."""


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C in another form: DuckDB's client turns a KeyboardInterrupt during
    a query into ``RuntimeError: Query interrupted`` (or its own ``InterruptException``), which an
    ``except Exception`` would otherwise take for an error to report and carry on after."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, KeyboardInterrupt) or type(cur).__name__ == "InterruptException":
            return True
        cur = cur.__cause__ or cur.__context__
    return False
