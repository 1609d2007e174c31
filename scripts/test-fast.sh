#!/usr/bin/env bash
# The fast tier, for while you work: the native core's tests (unit, expert fixtures, the properties at
# a reduced case count), the routing case tables natively, and the checks that read the sources and
# docs (tests/native). It builds no wasmtime: no component, no OpenClaw, no benchmarks;
# scripts/test.sh runs those (and CI runs that).
#   PROPTEST_CASES=N  cases per property (default 32; the full command runs each property's own count)
set -euo pipefail
cd "$(dirname "$0")/.."
export PROPTEST_CASES="${PROPTEST_CASES:-32}"
started=$(date +%s)
cargo test --quiet -p graphiti-openclaw-plugin -p graphiti-openclaw-native-tests
echo "test-fast: passed in $(( $(date +%s) - started )) s"
