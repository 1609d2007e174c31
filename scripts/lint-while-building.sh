#!/usr/bin/env bash
# Cargo's RUSTC_WORKSPACE_WRAPPER in scripts/test.sh: each workspace crate is compiled by
# clippy-driver (rustc with clippy's lints), with the project's lint levels, so the builds the test
# command needs anyway are its lint too (no second, check-mode pass over every dependency).
# Dependencies are compiled by rustc as usual. Cargo runs it as: wrapper RUSTC ARGS…
set -euo pipefail
driver="$(dirname "$(rustc --print sysroot)/bin/x")/clippy-driver"
exec "$driver" "$@" -D warnings -D clippy::too_many_lines -D clippy::disallowed_methods
