#!/usr/bin/env bash
# The PRD's public/private boundary audit, both halves:
#  1. `graphiti-openclaw audit-boundary` on the repository's config directory, with the private
#     overlay config/private/ as --overlay-dir when it exists (its terms must not appear in public);
#  2. git: config/private/ must be ignored, and no file in it tracked or committable.
# Usage: scripts/audit-boundary.sh [REPOSITORY]  (default: this one). Exit 0 when both pass, else 1.
# The CLI is target/release/graphiti-openclaw (scripts/build.sh), or $GRAPHITI_OPENCLAW_CLI.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "${1:-$here}" && pwd)"
cli="${GRAPHITI_OPENCLAW_CLI:-$here/target/release/graphiti-openclaw}"
overlay_path="config/private"
failed=0

cd "$repo"
args=(--config-dir config --quiet)
if [ -d "$overlay_path" ]; then
    args+=(--overlay-dir "$overlay_path")
fi
"$cli" "${args[@]}" audit-boundary || failed=1

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "audit-boundary: $repo is not a git work tree: cannot check that $overlay_path/ is ignored" >&2
    exit 1
fi
# The rules themselves: a file that does not exist yet must already be ignored there.
if ! git check-ignore -q --no-index "$overlay_path/any-file.yaml"; then
    echo "audit-boundary: git does not ignore $overlay_path/: add '/$overlay_path/' to .gitignore" >&2
    failed=1
fi
# Files already in git (committed or staged), and files on disk that git would add.
while IFS= read -r file; do
    [ -n "$file" ] || continue
    echo "audit-boundary: $file is in git (tracked or staged): remove it with 'git rm --cached'" >&2
    failed=1
done < <(git ls-files -- "$overlay_path")
while IFS= read -r file; do
    [ -n "$file" ] || continue
    echo "audit-boundary: $file would be committed: git does not ignore it" >&2
    failed=1
done < <(git ls-files --others --exclude-standard -- "$overlay_path")

if [ "$failed" -eq 0 ]; then
    echo "audit-boundary: git ignores $overlay_path/ and tracks none of its files"
fi
exit "$failed"
