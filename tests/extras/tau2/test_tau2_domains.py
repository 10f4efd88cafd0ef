"""A τ² world is built from each domain's own module, not τ²'s registry (which imports every
agent and user simulator, and through them litellm: seconds per process, on every Ray worker).
What it builds must be what the registry gives for that domain name."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from groundeval.worlds.tau2 import DOMAINS
from groundeval.worlds.tau2._lib import domain_functions


def _timeless(x):
    """A task as data, without the wall-clock timestamps τ² stamps on history messages at load."""
    if isinstance(x, dict):
        return {k: _timeless(v) for k, v in x.items() if k != "timestamp"}
    if isinstance(x, list):
        return [_timeless(v) for v in x]
    return x


def _tool_names(env) -> list[list[str]]:
    return [sorted(kit.get_tools()) if kit is not None else [] for kit in (env.tools, env.user_tools)]


@pytest.mark.parametrize("domain", DOMAINS)
def test_each_domain_gives_the_registrys_environment_and_tasks(domain):
    import tau2.registry as reg

    constructor, tasks_loader = domain_functions(domain)
    mine, theirs = constructor(), reg.registry.get_env_constructor(domain)()
    assert mine.get_policy() == theirs.get_policy()
    assert _tool_names(mine) == _tool_names(theirs) and _tool_names(mine)[0]
    mine_tasks = [_timeless(t.model_dump(mode="json")) for t in tasks_loader()]
    theirs_tasks = [_timeless(t.model_dump(mode="json")) for t in reg.registry.get_tasks_loader(domain)()]
    assert mine_tasks and mine_tasks == theirs_tasks


def test_building_a_world_imports_neither_litellm_nor_the_registry():
    code = (
        "import sys\n"
        "from groundeval.worlds.tau2 import load_tau2_world\n"
        "w = load_tau2_world('mock')\n"
        "assert w.manifest.tasks\n"
        "print('litellm' in sys.modules, 'tau2.registry' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
