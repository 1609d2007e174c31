# Sourced by scripts/test.sh and scripts/bench.sh: TMPDIR becomes a fresh directory of this run, so
# the scratch directories that tests and benchmarks make (hundreds per run, gigabytes over a few
# runs) are in one place: removed when the run succeeds, kept and named when it fails.
scratch_tmp="$(mktemp -d "${TMPDIR:-/tmp}/graphiti-tests.XXXXXX")"
export TMPDIR="$scratch_tmp"
trap 'status=$?; if [ "$status" -eq 0 ]; then rm -rf "$scratch_tmp"; else echo "$(basename "$0"): failed (exit $status); its scratch files are kept in $scratch_tmp" >&2; fi; exit "$status"' EXIT
