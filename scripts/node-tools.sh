#!/usr/bin/env bash
# Installs the pinned Node tools into tools/node/ from npm: Node 24 (OpenClaw 2026.9 needs >= 24.16),
# jco (transpiles the component), esbuild (bundles the Control UI), OpenClaw itself and puppeteer-core
# (for the end-to-end tests; it drives the system's Chromium and downloads none). Safe to run again:
# it does nothing when the installed lockfile matches scripts/node-tools/package-lock.json.
# Prints the directory to put on PATH (tools/node/bin) as its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=$root/tools/node
spec=$root/scripts/node-tools
node_version=24.21.0

if ! command -v npm >/dev/null 2>&1; then
    echo "node-tools: npm not found; install Node.js (any version with npm) first" >&2
    exit 1
fi
mkdir -p "$tools/bin"
if [ "$("$tools/node24/node_modules/.bin/node" --version 2>/dev/null)" != "v$node_version" ]; then
    echo "node-tools: installing Node $node_version from npm"
    npm install --prefix "$tools/node24" --no-audit --no-fund --loglevel=error "node@$node_version" >/dev/null
fi
ln -sf "$tools/node24/node_modules/.bin/node" "$tools/bin/node"
export PATH="$tools/bin:$PATH"

# An install killed half-way leaves the lockfile matched but its commands gone: install again then.
if ! cmp -s "$spec/package-lock.json" "$tools/.installed-lock" 2>/dev/null \
    || [ ! -e "$tools/node_modules/.bin/jco" ] || [ ! -e "$tools/node_modules/.bin/openclaw" ] \
    || [ ! -e "$tools/node_modules/.bin/esbuild" ]; then
    echo "node-tools: installing jco, esbuild, OpenClaw and puppeteer-core (pinned in scripts/node-tools/package-lock.json)"
    cp "$spec/package.json" "$tools/"
    # A fresh lockfile is written on the first install; commit it to pin every transitive version.
    if [ -f "$spec/package-lock.json" ]; then cp "$spec/package-lock.json" "$tools/"; fi
    (cd "$tools" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
    [ -f "$spec/package-lock.json" ] || cp "$tools/package-lock.json" "$spec/package-lock.json"
    cp "$spec/package-lock.json" "$tools/.installed-lock"
fi
ln -sf "$tools/node_modules/.bin/jco" "$tools/bin/jco"
ln -sf "$tools/node_modules/.bin/openclaw" "$tools/bin/openclaw"
echo "$tools/bin"
