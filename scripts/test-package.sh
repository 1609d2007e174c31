#!/usr/bin/env bash
# The test command's OpenClaw-package steps, one after another (scripts/test.sh runs them beside
# cargo test: they mostly wait on Node and on the servers they start). Usage: test-package.sh
# [CARGO_TARGET_DIR of the component's build]. Each step prints its seconds since this script began.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS=0
step() { echo "test-package: [${SECONDS} s] $*"; }

step "the OpenClaw package (Node 24, jco and OpenClaw 2026.9.6 pinned from npm into tools/node/; the install's lock, with a stub npm)"
CARGO_TARGET_DIR="${1:-target}" bash scripts/package-openclaw.sh
PATH="$(bash scripts/node-tools.sh | tail -n 1):$PATH"
node --test plugin/openclaw/test/*.test.js tests/scripts/node-tools.test.js
step "every shell block of the README and docs/ runs as written, or says why it cannot here; the benchmark table is its recorded output"
node --test tests/docs/blocks.test.js tests/docs/benchmarks.test.js
step "the limits benchmark, quick (routing, the shim's hooks and start-up, OpenClaw's hook runner; it checks every answer)"
BENCH_QUICK=1 bash scripts/bench.sh
step "done"
