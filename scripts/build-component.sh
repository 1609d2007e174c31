#!/usr/bin/env bash
# Builds the component, target/wasm32-wasip2/component/graphiti_openclaw.wasm (used by scripts/build.sh
# and scripts/package-openclaw.sh), then shrinks its core module with Binaryen's wasm-opt.
#
# `cargo rustc --crate-type cdylib`: the plugin's lib is an rlib (the native tests link it; a cdylib
# there would be linked natively for nothing), and for a unit that is an rlib too cargo would not pass
# `-C lto`, so the profile's `lto = true` would silently not apply.
#
# wasm-opt: `jco opt` (jco and its Binaryen are pinned in scripts/node-tools/package-lock.json, installed
# by scripts/node-tools.sh) runs it on the component's core modules and splices them back. Binaryen is
# 130 by an npm override: jco 1.11.2 (pinned for its glue, see transpile-component.sh) brings 123,
# whose output was larger and slower in the shim's hook row (docs/decisions/jco-and-binaryen-pins.md). The features
# are the ones rustc enables for wasm32-wasip2, and SIMD (.cargo/config.toml; the stripped module has
# no target_features section to read them from). Not `--low-memory-unused`: Rust puts its stack first, at the bottom of memory.
# Done again only when cargo linked a new module (its own output in deps/, copied to .linked).
# With CARGO_TARGET_DIR set (the test command builds the component there, beside its native build, so
# that neither waits for the other's lock on target/), the result is still delivered to the path above.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$(bash scripts/node-tools.sh | tail -n 1):$PATH"

cargo rustc --quiet -p graphiti-openclaw-plugin --lib --crate-type cdylib \
    --target wasm32-wasip2 --profile component
linked=${CARGO_TARGET_DIR:-target}/wasm32-wasip2/component/deps/graphiti_openclaw.wasm
wasm=target/wasm32-wasip2/component/graphiti_openclaw.wasm
mkdir -p "$(dirname "$wasm")"
if [ ! -f "$wasm.optimized" ] || ! cmp -s "$linked" "$wasm.linked"; then
    features="--enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
        --enable-nontrapping-float-to-int --enable-multivalue --enable-reference-types --enable-simd"
    # shellcheck disable=SC2086
    jco opt "$linked" -o "$wasm.tmp" --quiet -- -Oz $features --strip-debug --strip-producers
    mv -f "$wasm.tmp" "$wasm.optimized"
    cp "$linked" "$wasm.linked"
fi
# cargo links its output to $wasm again on every run: replaced, not written through.
cp "$wasm.optimized" "$wasm.tmp"
mv -f "$wasm.tmp" "$wasm"
