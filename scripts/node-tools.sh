#!/usr/bin/env bash
# Installs the pinned Node tools into tools/node/ from npm: Node 24 (OpenClaw 2026.9 needs >= 24.16),
# jco (transpiles the component), esbuild (bundles the Control UI), OpenClaw itself and puppeteer-core
# (for the end-to-end tests; it drives the system's Chromium and downloads none). Safe to run again,
# and twice at once (one installs while the other waits): it does nothing when the installed
# lockfile matches scripts/node-tools/package-lock.json and no installed file is missing.
# Prints the directory to put on PATH (tools/node/bin) as its last line. NODE_TOOLS_DIR installs
# elsewhere (the script's own test).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=${NODE_TOOLS_DIR:-$root/tools/node}
spec=$root/scripts/node-tools
node_version=24.21.0

if ! command -v npm >/dev/null 2>&1; then
    echo "node-tools: npm not found; install Node.js (any version with npm) first" >&2
    exit 1
fi
mkdir -p "$tools/bin"
# One install at a time: two interleaved npm runs left OpenClaw with thousands of files missing.
exec 9>"$tools/.install-lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
fi
if [ "$("$tools/node24/node_modules/.bin/node" --version 2>/dev/null)" != "v$node_version" ]; then
    echo "node-tools: installing Node $node_version from npm"
    npm install --prefix "$tools/node24" --no-audit --no-fund --loglevel=error "node@$node_version" >/dev/null
fi
ln -sf "$tools/node24/node_modules/.bin/node" "$tools/bin/node"
export PATH="$tools/bin:$PATH"

# Files under node_modules, caches left out: fewer than the install left means a broken tree.
installed_files() {
    (cd "$tools" && find node_modules -path node_modules/.cache -prune -o -type f -print 2>/dev/null | wc -l)
}
tree_intact() {
    [ -e "$tools/node_modules/.bin/jco" ] && [ -e "$tools/node_modules/.bin/openclaw" ] \
        && [ -e "$tools/node_modules/.bin/esbuild" ] && [ -f "$tools/.installed-files" ] \
        && [ "$(installed_files)" -ge "$(cat "$tools/.installed-files")" ]
}

if ! cmp -s "$spec/package-lock.json" "$tools/.installed-lock" 2>/dev/null || ! tree_intact; then
    echo "node-tools: installing jco, esbuild, OpenClaw and puppeteer-core (pinned in scripts/node-tools/package-lock.json)"
    # Forgotten first: an install stopped half-way is done again by the next run.
    rm -f "$tools/.installed-lock" "$tools/.installed-files"
    cp "$spec/package.json" "$tools/"
    if [ -f "$spec/package-lock.json" ]; then
        cp "$spec/package-lock.json" "$tools/"
        # npm ci starts from an empty node_modules: nothing a broken install left survives.
        (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    else
        # A fresh lockfile is written on the first install; commit it to pin every transitive version.
        (cd "$tools" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
        cp "$tools/package-lock.json" "$spec/package-lock.json"
    fi
    installed_files > "$tools/.installed-files"
    cp "$spec/package-lock.json" "$tools/.installed-lock"
fi
ln -sf "$tools/node_modules/.bin/jco" "$tools/bin/jco"
ln -sf "$tools/node_modules/.bin/openclaw" "$tools/bin/openclaw"
echo "$tools/bin"
