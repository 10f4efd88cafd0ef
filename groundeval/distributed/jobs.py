"""A worker that holds one loaded thing and runs jobs on it, with no Ray in it (the Ray backend
wraps it in an actor: :meth:`groundeval.distributed.ray_backend.RayBackend.worker_jobs`).

The higher layers say what is held and what a job is, as two module-level functions that every
worker imports by reference (nothing here knows worlds or trajectories):

* ``setup(*args) -> held`` — run once when the worker starts (a world run: load the world and
  build the agent; trajectory verification: load the world and its verifier);
* ``job(held, item) -> result`` — run for each item (a world run: one ``(task id, trial)``
  episode, its trace back; verification: one batch of records, their result lines back).

A setup that fails is kept and raised from :meth:`JobWorker.ready`, which the driver asks every
worker before the first job, so a worker that cannot start is one error before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..errors import GroundevalError
from .worker import KeepsSetupError


class WorkerFailure(GroundevalError):
    """A Ray worker could not run an episode (it died, or failed outside the agent's code): what an
    errored episode's trace records in its place."""


@dataclass(frozen=True)
class JobFailure:
    """Why a job gave no result: its worker ``died`` (a lost process), or the job raised ``error``
    on it; ``message`` says which in one line (``the Ray worker died: ...``)."""

    died: bool
    error: BaseException
    message: str


class JobWorker(KeepsSetupError):
    """``setup(*args)`` once, then ``job(held, item)`` per :meth:`run` (threads of one worker share
    ``held``: a job function must be safe to run on it concurrently when ``concurrency`` > 1)."""

    def __init__(self, setup: Callable[..., Any], args: tuple[Any, ...], job: Callable[[Any, Any], Any]):
        self.error: Exception | None = None
        self.job = job
        self.held: Any = None
        try:
            self.held = setup(*args)
        except Exception as exc:  # noqa: BLE001 - raised from ready(), where the driver reports it
            self.error = exc

    def run(self, item: Any) -> Any:
        if self.error is not None:
            raise self.error
        return self.job(self.held, item)
