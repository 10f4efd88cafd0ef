"""Users' agents for the runner tests, loaded through ``module:factory`` specs."""

from __future__ import annotations

import os
import time

from groundeval.agents.oracle import OracleAgent


class SlowOracle(OracleAgent):
    """The oracle, after a pause: long enough to kill a run mid-way."""

    name = "slow-oracle"

    def __init__(self, delay: float):
        self.delay = delay

    def run(self, episode) -> None:
        time.sleep(self.delay)
        super().run(episode)


def make() -> SlowOracle:
    return SlowOracle(float(os.environ.get("SLOW_AGENT_DELAY", "0.25")))
