#!/usr/bin/env bash
# Agent-framework extras: real agents of OpenAI Agents SDK, LangGraph, CrewAI, Microsoft Agent
# Framework and Pydantic AI, against a scripted local OpenAI-compatible server, answer through
# groundeval's gated tools; each trace scores as the same calls through the Python API, runs
# captured by the frameworks' own OpenTelemetry instrumentation replay into the same traces, and
# the framework sections of docs/integration.md run. All five share one venv with groundeval[dev].
# The install goes through uv (itself from PyPI): the same resolution as pip's, but pip took
# 8 min to fetch these ~160 packages (about 900 MB) one at a time on this machine, uv under 1 min.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .venv-frameworks
python3 -m venv .venv-frameworks
.venv-frameworks/bin/pip install -q uv
.venv-frameworks/bin/uv pip install -q --python .venv-frameworks/bin/python -e '.[dev,frameworks,otel]'
GROUNDEVAL_REQUIRE_EXTRAS=1 .venv-frameworks/bin/python -m pytest tests/extras/frameworks -q -m ""  # the slow world episodes too
