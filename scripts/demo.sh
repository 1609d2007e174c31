#!/usr/bin/env bash
# The README's first command: builds everything, then shows routing on the example config through the
# component: a dry run, the same prompt with recalled entities, and one simulated turn.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cli=(target/release/graphiti-openclaw --config-dir config --state-dir "${TMPDIR:-/tmp}/graphiti-openclaw-demo-state")

banner() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

banner 'graphiti-openclaw intent-test "I had dinner with the Series A founder"'
"${cli[@]}" intent-test "I had dinner with the Series A founder"

banner 'A tie on keywords, broken by a recalled restaurant (examples/recall_restaurant.json)'
"${cli[@]}" intent-test "Plan a dinner with a founder"  | sed -n '/^Decision/p'
"${cli[@]}" intent-test "Plan a dinner with a founder" --recall config/examples/recall_restaurant.json | sed -n '/^RULE/,/^Decision/p'

banner 'The same prompt in a group chat (private packs never reach groups)'
"${cli[@]}" intent-test "Summarise the term sheet for the seed round" --group | sed -n '/^Decision/p'

banner 'graphiti-openclaw turn "Draft a tweet about our launch"'
"${cli[@]}" turn "Draft a tweet about our launch" --reply "Launch day! Here is what we built."

banner 'graphiti-openclaw lint-rules, eval'
"${cli[@]}" lint-rules
"${cli[@]}" eval config/eval/shadow_compare.json --threshold 0.9 | head -3
