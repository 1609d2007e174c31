#!/usr/bin/env bash
# The README's second command (and CI's): builds everything and runs every test, then the routing
# benchmark in its quick mode (it checks its answers, so it is a test too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh

echo "test: cargo test (native core, host shim, component through the shim)"
cargo test --release --workspace --exclude probe-guest

echo "test: routing benchmark (quick)"
ROUTING_BENCH_QUICK=1 cargo bench --quiet -p graphiti-openclaw-tests --bench routing
