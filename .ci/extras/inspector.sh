#!/usr/bin/env bash
# The official MCP Inspector CLI (npm @modelcontextprotocol/inspector, pinned) drives groundeval
# serve as users do from a shell: one process, and so one MCP session, per call. Over HTTP it
# completes an episode call by call; over stdio each call starts its own server process (see
# docs/integration.md). Node packages go to .venv-inspector/node_modules; the tests run in the
# main venv (they need nothing beyond groundeval[dev]).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .venv-inspector
mkdir -p .venv-inspector
npm install --prefix .venv-inspector --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector@2.12.0
GROUNDEVAL_REQUIRE_EXTRAS=1 .venv/bin/python -m pytest tests/extras/inspector -q -m ""
