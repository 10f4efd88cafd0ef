"""Agents for the Ray tests. The conftest puts this folder on PYTHONPATH before Ray starts, so
workers import them by ``module:factory`` (``ray_agents:boom``) or unpickle them by reference."""

from __future__ import annotations

import os
import threading
from typing import Any

from groundeval.agents.oracle import OracleAgent
from groundeval.errors import ProviderError


class CrashOn:
    """The oracle, except that on the given questions it kills the process it runs in — a
    worker dying mid-episode. On the process that made it (the test runner) it raises instead."""

    name = "crash-on"

    def __init__(self, ids: list[str]):
        self.ids = frozenset(ids)
        self.home = os.getpid()
        self.oracle = OracleAgent()

    def run(self, episode: Any) -> None:
        if episode.question.id in self.ids:
            if os.getpid() == self.home:
                raise RuntimeError("CrashOn ran outside a Ray worker")
            os._exit(17)
        self.oracle.run(episode)


class Boom:
    """Searches once, then raises on every other question: an agent bug, recorded in the trace."""

    name = "boom"

    def run(self, episode: Any) -> None:
        episode.search("incident")
        if sum(map(ord, episode.question.id)) % 2:
            raise ValueError(f"boom on {episode.question.id}")
        OracleAgent().run(episode)


def boom() -> Boom:
    return Boom()


class Fatal:
    """An LLM adapter whose key is refused: a fatal provider error stops the run."""

    name = "fatal"

    def run(self, episode: Any) -> None:
        raise ProviderError("401 from the provider: invalid API key", status=401, fatal=True)


def fatal() -> Fatal:
    return Fatal()


class Unpicklable:
    """Holds a lock: cannot be pickled, so cannot be sent to a worker."""

    name = "unpicklable"

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def run(self, episode: Any) -> None:
        OracleAgent().run(episode)


# --------------------------------------------------------------------------- world agents


class WorldBoom:
    """The world's gold agent, except that on about half the tasks it asks for the facts and then
    raises: an agent bug, recorded in the episode's trace (ended_by error), never raised."""

    name = "world-boom"
    needs_answer_key = True

    def run(self, episode: Any) -> None:
        from groundeval.worlds.agents import GoldAgent

        if sum(map(ord, episode.task_id)) % 2:
            episode.say("What is your order id?")
            raise ValueError(f"boom on {episode.task_id}")
        GoldAgent().run(episode)


def world_boom() -> WorldBoom:
    return WorldBoom()


class WorldCrashOn:
    """The world's gold agent, except that on the given tasks it kills the process it runs in — a
    Ray worker dying mid-episode. On the process that made it (the test runner) it raises instead."""

    name = "world-crash-on"
    needs_answer_key = True

    def __init__(self, task_ids: list[str]):
        self.ids = frozenset(task_ids)
        self.home = os.getpid()

    def run(self, episode: Any) -> None:
        from groundeval.worlds.agents import GoldAgent

        if episode.task_id in self.ids:
            if os.getpid() == self.home:
                raise RuntimeError("WorldCrashOn ran outside a Ray worker")
            os._exit(17)
        GoldAgent().run(episode)


class WorldUnpicklable:
    """Holds a lock: cannot be sent to a worker."""

    name = "world-unpicklable"

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def run(self, episode: Any) -> None:
        episode.say("Anything else?", done=True)
