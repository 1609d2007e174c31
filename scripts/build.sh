#!/usr/bin/env bash
# Builds the component (plugin.wasm), the probe guest used by the shim's tests, and the host shim CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "build: plugin component (wasm32-wasip2)"
bash scripts/build-component.sh
echo "build: probe guest (wasm32-wasip2)"
cargo build --quiet -p probe-guest --target wasm32-wasip2 --profile component
echo "build: host shim (graphiti-openclaw) and the Graphiti stand-in"
cargo build --quiet --release -p graphiti-openclaw-host-shim -p graphiti-standin
wasm=target/wasm32-wasip2/component/graphiti_openclaw.wasm
echo "build: $wasm ($(wc -c <"$wasm") bytes), target/release/graphiti-openclaw"
