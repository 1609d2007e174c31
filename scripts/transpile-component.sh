#!/usr/bin/env bash
# Transpiles a component of the graphiti-plugin world with jco for the OpenClaw adapter:
#   scripts/transpile-component.sh <component.wasm> <output directory>
# JSPI: the host imports that wait (http-request, acquire-lock) are async in JS while the guest calls
# them synchronously; only the exports listed as async may call them (a call from another export
# traps). `before-agent-start`, `agent-end` and `run-command` may send or take a lock (recall, merging
# counters, flush); `tick` sends. Needs jco on PATH (scripts/node-tools.sh). Used by
# scripts/package-openclaw.sh, and by the adapter's tests to transpile the probe guest.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 <component.wasm> <output directory>" >&2
    exit 2
fi
host='graphiti:openclaw/host'
plugin='graphiti:openclaw/plugin@0.4.0'
jco transpile "$1" --quiet --no-typescript -o "$2" --name plugin \
    --instantiation async --async-mode jspi \
    --async-imports "$host#http-request" "$host#acquire-lock" \
    --async-exports "$plugin#before-agent-start" "$plugin#agent-end" "$plugin#tick" "$plugin#run-command"
