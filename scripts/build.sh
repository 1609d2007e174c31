#!/usr/bin/env bash
# Builds the component (plugin.wasm), the probe guest used by the shim's tests, and the host shim CLI.
# `--wasm-only` skips the native build: the test command's `cargo test` builds the CLI itself, with
# the features the tests add to shared dependencies, so wasmtime is built once rather than twice.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
    "") native=1 ;;
    --wasm-only) native=0 ;;
    *) echo "build.sh: unknown argument '$1' (the one option is --wasm-only)" >&2; exit 2 ;;
esac
bash scripts/setup.sh

echo "build: plugin component (wasm32-wasip2)"
bash scripts/build-component.sh
echo "build: probe guest (wasm32-wasip2)"
cargo build --quiet -p probe-guest --target wasm32-wasip2 --profile component
built=${CARGO_TARGET_DIR:-target}/wasm32-wasip2/component/probe_guest.wasm
if [ "$built" != target/wasm32-wasip2/component/probe_guest.wasm ]; then
    cp "$built" target/wasm32-wasip2/component/probe_guest.wasm.tmp
    mv -f target/wasm32-wasip2/component/probe_guest.wasm.tmp target/wasm32-wasip2/component/probe_guest.wasm
fi
wasm=target/wasm32-wasip2/component/graphiti_openclaw.wasm
if [ "$native" = 1 ]; then
    echo "build: host shim (graphiti-openclaw) and the Graphiti stand-in"
    cargo build --quiet --release -p graphiti-openclaw-host-shim -p graphiti-standin
    echo "build: $wasm ($(wc -c <"$wasm") bytes), target/release/graphiti-openclaw"
else
    echo "build: $wasm ($(wc -c <"$wasm") bytes)"
fi
