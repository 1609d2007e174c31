#!/usr/bin/env bash
# The README's second command (and CI's): builds everything and runs every test, then the benchmarks
# in their quick mode (they check their answers, so they are tests too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh

if [ -z "${GRAPHITI_URL:-}" ]; then
    echo "test: GRAPHITI_URL is not set: the test against a real Graphiti server is SKIPPED (the stand-in tests run)"
else
    echo "test: also against the real Graphiti at $GRAPHITI_URL"
fi
echo "test: cargo test (native core, host shim, component through the shim, Graphiti stand-in)"
cargo test --release --workspace --exclude probe-guest

echo "test: benchmarks, quick (they check their answers)"
ROUTING_BENCH_QUICK=1 cargo bench --quiet -p graphiti-openclaw-tests --bench routing
HOOKS_BENCH_QUICK=1 cargo bench --quiet -p graphiti-openclaw-tests --bench hooks
