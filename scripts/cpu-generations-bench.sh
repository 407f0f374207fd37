#!/usr/bin/env bash
# Generations rules against B36/S125 (a life-like rule of about Star Wars' gate count) on one CPU
# thread, machine code compiled at run time, REPEAT interleaved rounds (the machine is shared:
# take medians); then Star Wars and B36/S125 with more generations a pass and wider tiles.
# Usage: scripts/cpu-generations-bench.sh [lifegen binary] > log
set -u
BIN=${1:-target/release/lifegen}
REPEAT=${REPEAT:-5}
echo "# $(date -u) $(git rev-parse --short HEAD) $(lscpu | grep 'Model name' | sed 's/  */ /g')"
for round in $(seq "$REPEAT"); do
  for rule in B36/S125 345/2/4 /2/3 B3/S23/3; do
    for setting in "" LIFEGEN_CPU_GENS_PER_PASS=32 LIFEGEN_CPU_TILE_WORDS=32; do
      case "$rule" in /2/3|B3/S23/3) [ -n "$setting" ] && continue ;; esac
      r=$(env LIFEGEN_CPU_CODE=native $setting "$BIN" bench --backend cpu --threads 1 --rule "$rule" \
            --size 4096x4096 --gens 512 --runs 3 2>&1 | awk '/^cell updates\/s:/ {print $3}')
      echo "round $round $rule ${setting:-default} $r"
    done
  done
done
