#!/usr/bin/env bash
# Transpiles a component of the graphiti-plugin world with jco for the OpenClaw adapter:
#   scripts/transpile-component.sh <component.wasm> <output directory>
# JSPI: the host imports that wait (http-request, http-batch, redis-command, acquire-lock) are async in JS while the guest calls
# them synchronously; only the exports listed as async may call them (a call from another export
# traps). `before-agent-start`, `agent-end` and `run-command` may send or take a lock (recall, merging
# counters, flush); `tick` sends; `before-tool-call` (a CONFIRM call pauses its run) and the expert
# runtime's exports change the runs record under its lock. The export names carry the WIT package's
# version, read from wit/world.wit (a name that matches no export is ignored by jco: the export
# would stay synchronous and trap at its first lock). Needs jco on PATH (scripts/node-tools.sh). Used
# by scripts/package-openclaw.sh, and by the adapter's tests to transpile the probe guest.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 <component.wasm> <output directory>" >&2
    exit 2
fi
version=$(sed -n 's/^package graphiti:openclaw@\(.*\);$/\1/p' "$(dirname "$0")/../wit/world.wit")
if [ -z "$version" ]; then
    echo "$0: no 'package graphiti:openclaw@<version>;' line in wit/world.wit" >&2
    exit 1
fi
host='graphiti:openclaw/host'
exports=()
for name in hooks#before-agent-start hooks#agent-end hooks#tick hooks#before-tool-call \
    commands#run-command experts#expert-webhook experts#expert-channel-message \
    experts#expert-tick experts#expert-run-ended experts#expert-delivered; do
    exports+=("graphiti:openclaw/${name%%#*}@$version#${name#*#}")
done
jco transpile "$1" --quiet --no-typescript -o "$2" --name plugin \
    --instantiation async --async-mode jspi \
    --async-imports "$host#http-request" "$host#http-batch" "$host#redis-command" "$host#acquire-lock" \
    --async-exports "${exports[@]}" --minify
# Minified (--minify), the glue's import, paid by every process's first turn, is shorter.
#
# jco is pinned at 1.11.2 (scripts/node-tools/package.json): its glue calls a host import directly
# (async ones through WebAssembly.Suspending). 1.15 adds a task record per call; from 1.16 on, every
# imported call, synchronous ones too, goes through the component model's async task bookkeeping (a
# task and a subtask record, several debug-log checks reading process.env), a large share of each
# hook, and its minified glue is several times larger (docs/decisions/jco-and-binaryen-pins.md).
