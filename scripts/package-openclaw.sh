#!/usr/bin/env bash
# Builds the OpenClaw package: plugin.wasm, transpiled by jco (JSPI: async host HTTP inside synchronous
# guest code), the JS adapter, the Control UI (bundled by esbuild) and the example configuration,
# as dist/graphiti-openclaw/ and dist/graphiti-openclaw-<version>.tgz for `openclaw plugins install`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PATH="$(bash scripts/node-tools.sh | tail -n 1):$PATH"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
for file in plugin/openclaw/package.json plugin/openclaw/openclaw.plugin.json; do
    if ! grep -q "\"version\": \"$version\"" "$file"; then
        echo "package: $file does not have the workspace version $version" >&2
        exit 1
    fi
done

echo "package: plugin component (wasm32-wasip2)"
bash scripts/build-component.sh
wasm=target/wasm32-wasip2/component/graphiti_openclaw.wasm

out=dist/graphiti-openclaw
rm -rf "$out" "dist/graphiti-openclaw-$version.tgz"
mkdir -p "$out/dist"
echo "package: transpiling with jco (async host imports http-request, http-batch and acquire-lock; async exports that may call them)"
bash scripts/transpile-component.sh "$wasm" "$out/dist/component"
cp plugin/openclaw/src/*.js "$out/dist/"
cp plugin/openclaw/package.json plugin/openclaw/openclaw.plugin.json plugin/openclaw/README.md "$out/"
cp -R plugin/openclaw/widgets "$out/widgets"
# The example configuration is the default; a user's private overlay never ships.
cp -R config "$out/config"
rm -rf "$out/config/private"
# The browser code is built from source with the pinned esbuild; the manifest names what was built.
node scripts/build-control-ui.mjs "$out"

(cd dist && npm pack --silent ./graphiti-openclaw >/dev/null)
echo "package: dist/graphiti-openclaw/ and dist/graphiti-openclaw-$version.tgz ($(wc -c <"dist/graphiti-openclaw-$version.tgz") bytes)"
