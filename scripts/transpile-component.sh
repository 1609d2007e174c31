#!/usr/bin/env bash
# Transpiles a component of the graphiti-plugin world with jco for the OpenClaw adapter:
#   scripts/transpile-component.sh <component.wasm> <output directory>
# JSPI: the host imports that wait (http-request, http-batch, acquire-lock) are async in JS while the guest calls
# them synchronously; only the exports listed as async may call them (a call from another export
# traps). `before-agent-start`, `agent-end` and `run-command` may send or take a lock (recall, merging
# counters, flush); `tick` sends; `before-tool-call` (a CONFIRM call pauses its run) and the expert
# runtime's exports change the runs record under its lock. The export names carry the WIT package's
# version, read from wit/plugin.wit (a name that matches no export is ignored by jco: the export
# would stay synchronous and trap at its first lock). Needs jco on PATH (scripts/node-tools.sh). Used
# by scripts/package-openclaw.sh, and by the adapter's tests to transpile the probe guest.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 <component.wasm> <output directory>" >&2
    exit 2
fi
version=$(sed -n 's/^package graphiti:openclaw@\(.*\);$/\1/p' "$(dirname "$0")/../wit/plugin.wit")
if [ -z "$version" ]; then
    echo "$0: no 'package graphiti:openclaw@<version>;' line in wit/plugin.wit" >&2
    exit 1
fi
host='graphiti:openclaw/host'
plugin="graphiti:openclaw/plugin@$version"
exports=()
for name in before-agent-start agent-end tick run-command before-tool-call \
    expert-webhook expert-channel-message expert-tick expert-run-ended; do
    exports+=("$plugin#$name")
done
jco transpile "$1" --quiet --no-typescript -o "$2" --name plugin \
    --instantiation async --async-mode jspi \
    --async-imports "$host#http-request" "$host#http-batch" "$host#acquire-lock" \
    --async-exports "${exports[@]}" --minify
# Minified (--minify), the glue is half the size and its import, paid by every process's first
# turn, a quarter shorter. jco's glue asks process.env for JCO_DEBUG on every debug line of its task
# bookkeeping, several times per host call (process.env is a getenv each time): read it once when
# the module loads.
node - "$2/plugin.js" <<'JS'
const fs = require('node:fs');
const file = process.argv[2];
const check = 'globalThis?.process?.env?.JCO_DEBUG&&';
const text = fs.readFileSync(file, 'utf8');
if (!text.includes(check)) {
  console.warn(`transpile-component: ${file}: jco's debug-log check no longer reads as expected; left as generated (JCO_DEBUG is then read on every call)`);
  process.exit(0);
}
const once = 'const jcoDebugOnce = Boolean(globalThis?.process?.env?.JCO_DEBUG);\n';
fs.writeFileSync(file, once + text.split(check).join('jcoDebugOnce&&'));
JS
