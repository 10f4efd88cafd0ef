#!/usr/bin/env bash
# Agent-framework extras: real agents of OpenAI Agents SDK, LangGraph, CrewAI, Microsoft Agent
# Framework and Pydantic AI, against a scripted local OpenAI-compatible server, answer through
# groundeval's gated tools; each trace scores as the same calls through the Python API, and the
# framework sections of docs/integration.md run. All five share one venv with groundeval[dev].
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .venv-frameworks
python3 -m venv .venv-frameworks
.venv-frameworks/bin/pip install -q -e '.[dev,frameworks]'
GROUNDEVAL_REQUIRE_EXTRAS=1 .venv-frameworks/bin/python -m pytest tests/extras/frameworks -q
