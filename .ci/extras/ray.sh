#!/usr/bin/env bash
# Ray extra: run/score/eval with --backend ray on a local Ray instance give the local backend's bytes
# (traces, scores, reports), and worker failures are recorded like any errored episode (docs/ray.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .venv-ray
python3 -m venv .venv-ray
.venv-ray/bin/pip install -q uv  # uv resolves like pip but fetches in parallel
.venv-ray/bin/uv pip install -q --python .venv-ray/bin/python -e '.[dev,ray]'
GROUNDEVAL_REQUIRE_EXTRAS=1 RAY_ADDRESS= .venv-ray/bin/python -m pytest tests/extras/ray -q
