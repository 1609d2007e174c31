#!/usr/bin/env bash
# Builds the component, target/wasm32-wasip2/component/graphiti_openclaw.wasm (used by scripts/build.sh
# and scripts/package-openclaw.sh).
#
# `cargo rustc --crate-type cdylib`, not `cargo build`: the plugin's lib is also an rlib (the native
# tests link it), and for a unit that is an rlib too cargo does not pass `-C lto`, so the profile's
# `lto = true` was silently not applied (3,247,625 bytes then; 3,059,534 with it).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo rustc --quiet -p graphiti-openclaw-plugin --lib --crate-type cdylib \
    --target wasm32-wasip2 --profile component
