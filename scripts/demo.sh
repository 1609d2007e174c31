#!/usr/bin/env bash
# The README's first command: builds everything, then shows routing on the example config through the
# component: a dry run, the same prompt with recalled entities, one simulated turn, and the example
# expert package validated and its approval policy shown.
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

# A Graphiti stand-in on a free loopback port, seeded with synthetic memories (group "demo").
work=$(mktemp -d "${TMPDIR:-/tmp}/graphiti-openclaw-demo.XXXXXX")
target/release/graphiti-standin --port 0 --seed tests/graphiti-standin/seed/demo.json >"$work/standin.log" 2>&1 &
standin=$!
trap 'kill $standin 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q listening "$work/standin.log" && break; sleep 0.05; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/standin.log")
mkdir -p "$work/overlay"
printf 'graphiti:\n  url: %s/mcp\n  transport: mcp\n  group_id: { direct: demo, group: "demo-group-{chat}" }\n' "$url" \
    >"$work/overlay/settings.yaml"
turn=(target/release/graphiti-openclaw --config-dir config --overlay-dir "$work/overlay" --state-dir "$work/state"
      --allow-origin "$url")

banner "graphiti-openclaw turn \"Book lunch with the Acme Robotics founder\"   (Graphiti stand-in at $url)"
"${turn[@]}" turn "Book lunch with the Acme Robotics founder" --reply "Booked: Thursday 12:30 with Dana Lee."

banner 'graphiti-openclaw status'
"${turn[@]}" status

banner 'graphiti-openclaw lint-rules, eval'
"${cli[@]}" lint-rules
"${cli[@]}" eval config/eval/shadow_compare.json --threshold 0.9 | head -3

banner 'graphiti-openclaw experts validate config/experts/trip-planner-expert'
"${cli[@]}" experts validate config/experts/trip-planner-expert

banner 'graphiti-openclaw experts prompt trip-planner-expert   (its approval policy)'
"${cli[@]}" experts prompt trip-planner-expert | sed -n '/^## Tool Approval Policy/,/^## Instructions/p'

banner 'graphiti-openclaw experts fire trip-planner-expert booking_update --payload config/examples/booking_update.json   (a dry run)'
"${cli[@]}" experts fire trip-planner-expert booking_update --payload config/examples/booking_update.json | sed -n '1,/^## Context/p'
