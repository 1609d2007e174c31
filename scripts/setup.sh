#!/usr/bin/env bash
# Installs what the build needs and is missing; safe to run again (every step checks first).
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found; install Rust (rustup) first: https://rustup.rs" >&2
    exit 1
fi
if command -v rustup >/dev/null 2>&1; then
    if ! rustup target list --installed | grep -qx wasm32-wasip2; then
        echo "setup: adding the wasm32-wasip2 target"
        rustup target add wasm32-wasip2
    fi
elif ! rustc --print target-list | grep -qx wasm32-wasip2; then
    echo "setup: this Rust has no wasm32-wasip2 target and no rustup to add it" >&2
    exit 1
fi
if ! cargo clippy --version >/dev/null 2>&1; then
    if command -v rustup >/dev/null 2>&1; then
        echo "setup: adding clippy (the test command checks function length with it)"
        rustup component add clippy
    else
        echo "setup: this Rust has no clippy and no rustup to add it" >&2
        exit 1
    fi
fi
