#!/usr/bin/env bash
# The limits benchmark (issue 14's table): every row, ours against its baseline in the same run,
# measured three times (BENCH_QUICK=1: once, short, as the test command runs it); then one table of
# the medians (BENCH_RECORD=1: also written into docs/benchmarks.md, with the rows it came from);
# then (not in quick mode) the crates whose share of the component's code grew since the previous
# release's record. Every benchmark checks its answers, so a fast wrong answer fails this.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3
if [ -n "${BENCH_QUICK:-}" ]; then
    runs=1
    export ROUTING_BENCH_QUICK=1 LIMITS_BENCH_QUICK=1 HOOKS_BENCH_QUICK=1 IMPORT_BENCH_QUICK=1
fi
if [ ! -f target/wasm32-wasip2/component/graphiti_openclaw.wasm ] || [ ! -d dist/graphiti-openclaw ]; then
    echo "bench: build first (scripts/build.sh, then scripts/package-openclaw.sh)" >&2
    exit 2
fi
PATH="$(bash scripts/node-tools.sh | tail -n 1):$PATH"
source scripts/scratch-tmp.sh
export BENCH_ROWS="$TMPDIR/bench-rows.jsonl"
for run in $(seq "$runs"); do
    echo "bench: run $run of $runs"
    cargo bench --quiet -p graphiti-openclaw-tests --bench routing
    cargo bench --quiet -p graphiti-openclaw-tests --bench limits
    node tests/openclaw/bench-hooks.js 2>&1 | grep -v '\[plugins\]'
    node tests/openclaw/bench-import.js 2>&1 | grep -v '\[plugins\]'
done
if [ -n "${BENCH_RECORD:-}" ] && [ -z "${BENCH_QUICK:-}" ]; then
    node scripts/limits-table.mjs "$BENCH_ROWS" "$runs" --record
else
    node scripts/limits-table.mjs "$BENCH_ROWS" "$runs"
fi
if [ -z "${BENCH_QUICK:-}" ]; then
    # The component again, with its function names, to read its code by crate.
    named="$PWD/target/named"
    CARGO_TARGET_DIR="$named" CARGO_PROFILE_COMPONENT_STRIP=false cargo rustc --quiet -p graphiti-openclaw-plugin \
        --lib --crate-type cdylib --target wasm32-wasip2 --profile component
    release=$(ls docs/benchmarks/wasm-crates-*.json | sort -V | tail -n 1)
    node scripts/wasm-size-by-crate.mjs "$named/wasm32-wasip2/component/deps/graphiti_openclaw.wasm" 0 --against "$release" |
        sed -n '/crates whose share/,/^$/p'
fi
