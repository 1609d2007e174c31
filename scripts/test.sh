#!/usr/bin/env bash
# The README's second command (and CI's): builds everything and runs every test, then the benchmarks
# in their quick mode (they check their answers, so they are tests too).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/scratch-tmp.sh
SECONDS=0
# Each phase's line carries the seconds since the start: the log shows where the time goes.
say() { echo "test: [${SECONDS} s] $*"; }
say "build the component and the probe guest (scripts/build.sh --wasm-only)"
bash scripts/build.sh --wasm-only

say "cargo test (builds the CLI and the stand-in; native core, host shim, component through the shim, Graphiti stand-in)"
cargo test --release --workspace --exclude probe-guest
if [ -z "${GRAPHITI_URL:-}" ]; then
    say "GRAPHITI_URL is not set: the test against a real Graphiti server is SKIPPED (the stand-in tests run)"
else
    say "against the real Graphiti at $GRAPHITI_URL (a test ignored without it)"
    cargo test --release -p graphiti-openclaw-tests --test all -- --ignored --exact \
        graphiti::against_a_real_graphiti_when_graphiti_url_is_set
fi

say "the public/private boundary audit of config/ (scripts/audit-boundary.sh: the CLI's audit-boundary, then git ignores config/private/)"
bash scripts/audit-boundary.sh

say "clippy's default lints and too_many_lines (clippy.toml), natively and for the component, warnings denied"
lint="-D warnings -D clippy::too_many_lines -D clippy::disallowed_methods"
cargo clippy --release --quiet -p graphiti-openclaw-plugin -p graphiti-openclaw-host-shim -p graphiti-openclaw-tests -p graphiti-openclaw-native-tests -p graphiti-standin --all-targets -- $lint
cargo clippy --release --quiet -p graphiti-openclaw-plugin -p probe-guest --target wasm32-wasip2 --lib -- $lint

say "benchmarks, quick (they check their answers)"
RECALL_BENCH_QUICK=1 cargo bench --quiet -p graphiti-openclaw-tests --bench recall_session
RELEVANCE_BENCH_QUICK=1 cargo bench --quiet -p graphiti-openclaw-tests --bench relevance

say "the OpenClaw package (Node 24, jco and OpenClaw 2026.9.6 pinned from npm into tools/node/; the install's lock, with a stub npm)"
bash scripts/package-openclaw.sh
PATH="$(bash scripts/node-tools.sh | tail -n 1):$PATH"
node --test plugin/openclaw/test/*.test.js tests/scripts/node-tools.test.js
say "every shell block of the README and docs/ runs as written, or says why it cannot here; the benchmark table is its recorded output"
node --test tests/docs/blocks.test.js tests/docs/benchmarks.test.js
say "end to end in real OpenClaw (throwaway HOME; install from the archive and by name from a registry on loopback, setup, inspect, hook runner, agent --local turns)"
node --test tests/openclaw/e2e.test.js
say "upgrading from the previous release in real OpenClaw (tests/openclaw/releases/: by name with plugins update, and the README's archive reinstall; spool, held run, approval and turn records kept)"
node --test tests/openclaw/upgrade.test.js
say "docs/install.md's Rolling out in real OpenClaw (every phase's commands as written; memory-core's tools, the plugin's hooks, the fallback note; the memory-slot warning)"
node --test tests/openclaw/rollout.test.js
say "OpenClaw fault suite (two adapter processes on one state directory, one killed with SIGKILL)"
node --test tests/openclaw/faults.test.js
say "expert runs in a real OpenClaw Gateway (webhook, channel and cron triggers, lanes, retries, CONFIRM, a SIGKILL with runs in flight)"
node --test tests/openclaw/expert-runs.test.js
say "a headless Chromium for the Control UI (scripts/chromium.sh: Debian's chromium package when none is there)"
bash scripts/chromium.sh
say "whose memory in a real OpenClaw Gateway (each group's turn, tools and /recall use that group's Graphiti group; a forget the model proposes, confirmed through the Gateway); its Control UI in headless Chromium (lab off, Memory page, session panel, a read-only operator)"
node --test tests/openclaw/groups.test.js
say "what is not the user's in a real OpenClaw Gateway (deliveries, expert run sessions, commands and expert sessions fire no channel trigger)"
node --test tests/openclaw/privacy.test.js
say "the limits benchmark, quick (routing, the shim's hooks and start-up, OpenClaw's hook runner; it checks every answer)"
BENCH_QUICK=1 bash scripts/bench.sh
say "done"
