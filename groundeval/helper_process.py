"""Helper processes: CPU-bound Python work spread over idle cores, with the same results.

A helper is ``python -m <module>`` started from scratch — no ``fork`` of a process that may
hold DuckDB threads, no re-import of the caller's ``__main__`` as ``multiprocessing``'s
spawn does — exchanging pickled messages over its stdin and stdout. Its own helpers are
turned off (the caller's environment variable set to 0). Users: the contract digest
(``store/digest.py``) and re-scoring (``scoring/parallel.py``); each decides what a message
holds and falls back to doing the work itself when a helper cannot start or fails.

This module imports nothing heavy: every helper process imports it first.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["HelperProcess", "IdleMeter", "helpers_wanted", "idle_cores", "messages", "reply"]


def idle_cores() -> int:
    """Helper processes worth starting now: the cores this process may use, up to 4, when
    at least one of them is idle (1-minute load average); 0 on one core or a busy machine,
    where helpers would only add their start-up and transfer costs (~30 % more CPU)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except (OSError, AttributeError):  # no load average (e.g. Windows)
        busy = 0.0
    return min(cores, 4) if cores > 1 and cores - busy >= 1 else 0


class IdleMeter:
    """Whether a core was idle since the last look, from the machine's CPU counters
    (``/proc/stat``), for a decision taken mid-run: the 1-minute load average still counts this
    process's own work of the last seconds (at the end of a 1M load, DuckDB's threads), so it
    cannot tell that a core just went idle. Where there are no such counters, the load
    average decides (:func:`idle_cores`)."""

    MIN_TICKS = 5  # clock ticks (1/100 s) between two looks before they count

    def __init__(self) -> None:
        self._last = self._sample()

    @staticmethod
    def _sample() -> tuple[int, int] | None:
        """(idle, total) clock ticks of all cores since boot."""
        try:
            with open("/proc/stat", "rb") as fh:
                ticks = [int(x) for x in fh.readline().split()[1:9]]  # user .. steal
        except (OSError, ValueError):
            return None
        return ticks[3] + ticks[4], sum(ticks)  # idle + iowait

    def core_idle(self) -> bool:
        """A core's worth of idle time since the last look (at least ``MIN_TICKS`` of all
        cores' time ago; a look too soon after the last one answers false)."""
        now = self._sample()
        if now is None or self._last is None:
            return idle_cores() > 0
        idle, total = now[0] - self._last[0], now[1] - self._last[1]
        if total < self.MIN_TICKS * (os.cpu_count() or 1):
            return False
        self._last = now
        return idle * (os.cpu_count() or 1) >= 0.75 * total


def helpers_wanted(env_var: str, size: int, minimum: int) -> int:
    """Helpers for a job of ``size`` (0 = in this process): ``env_var`` overrides (0 turns them
    off, a value that is not a number too); a job below ``minimum`` is not worth their start-up."""
    env = os.environ.get(env_var)
    if env is not None:
        try:
            return max(0, int(env))
        except ValueError:
            return 0
    return idle_cores() if size >= minimum else 0


class HelperProcess:
    """``python -m module``: pickled messages in, pickled replies out; any failure to talk to
    it is an ``OSError`` (the caller then does the work itself)."""

    def __init__(self, module: str, env_var: str) -> None:
        env = dict(os.environ, **{env_var: "0"})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        try:
            pickle.dump(message, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.proc.stdin.flush()
        except (OSError, pickle.PickleError) as exc:
            raise OSError(f"helper {self.proc.args[-1]} stopped: {exc}") from exc

    def receive(self) -> Any:
        assert self.proc.stdout is not None
        try:
            return pickle.load(self.proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            raise OSError(f"helper {self.proc.args[-1]} stopped: {exc}") from exc

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Stop reading its answers, close its stdin (it ends its loop), wait a little, kill it
        if it does not stop. Its answer pipe is closed first: a helper still writing an answer
        nobody will read (the caller stopped early on an error or Ctrl-C; answers exceed the
        pipe's 64 KB) then fails on the broken pipe and exits, instead of blocking until killed."""
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def messages() -> Iterator[Any]:
    """The helper's side: each message from the parent, until it closes the pipe."""
    stdin = sys.stdin.buffer
    while True:
        try:
            yield pickle.load(stdin)
        except EOFError:
            return


def reply(value: Any) -> None:
    """The helper's side: answer the message just read."""
    pickle.dump(value, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()
