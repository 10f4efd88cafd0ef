#!/usr/bin/env bash
# OpenTelemetry extra: spans recorded by the real OpenTelemetry SDK (in-memory exporter, and the
# OTLP JSON encoding) import into observed runs that score against a task contract as expected.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .venv-otel
python3 -m venv .venv-otel
.venv-otel/bin/pip install -q uv  # uv resolves like pip but fetches in parallel (pip: minutes)
.venv-otel/bin/uv pip install -q --python .venv-otel/bin/python -e '.[dev,otel]'
GROUNDEVAL_REQUIRE_EXTRAS=1 .venv-otel/bin/python -m pytest tests/extras/otel -q
