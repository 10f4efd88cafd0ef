"""An agent that returns at once: no tool call, no answer (loaded as ``cli_idle_agents:idle``)."""

from __future__ import annotations


class Idle:
    name = "idle"

    def run(self, episode):
        return None


def idle():
    return Idle()
