#!/usr/bin/env bash
# The README's second command (and CI's): builds everything and runs every test, then the benchmarks
# in their quick mode (they check their answers, so they are tests too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh

echo "test: cargo test (native core, host shim, component through the shim)"
cargo test --release --workspace --exclude probe-guest

echo "test: benchmarks, quick (they check their answers)"
ROUTING_BENCH_QUICK=1 cargo bench --quiet -p graphiti-openclaw-tests --bench routing
HOOKS_BENCH_QUICK=1 cargo bench --quiet -p graphiti-openclaw-tests --bench hooks
