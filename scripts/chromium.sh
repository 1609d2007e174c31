#!/usr/bin/env bash
# Finds a headless-capable Chromium for the Control UI test, installing Debian's `chromium` package
# when none is there (as root, with apt-get). Safe to run again. Prints the browser's path as its
# last line; the test drives it with puppeteer-core, which downloads no browser of its own.
set -euo pipefail
for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then
        command -v "$name"
        exit 0
    fi
done
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium: not found; install Chromium (Debian: apt-get install chromium) and run again" >&2
    exit 1
fi
echo "chromium: installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq chromium >&2
command -v chromium
