#!/usr/bin/env bash
# Bounded planes against the torus on one CPU thread (issue 19): each rule's torus and plane back
# to back, REPEAT rounds (the machine is shared: take medians), with the run-time machine code
# (LIFEGEN_CPU_CODE=native) and, for the torus, also the default code.
# Usage: scripts/cpu-plane-bench.sh [lifegen binary] > log
set -u
BIN=${1:-target/release/lifegen}
REPEAT=${REPEAT:-3}
rate() { "$@" 2>&1 | awk '/^cell updates\/s:/ {print $3}'; }
echo "# $(date -u) $(git rev-parse --short HEAD) $(lscpu | grep 'Model name' | sed 's/  */ /g')"
for round in $(seq "$REPEAT"); do
  for spec in "B3/S23 4096x4096 512" "/2/3 4096x4096 512" "B2-a/S12 4096x4096 512" \
              "B3/S23 4133x97 8192" "B3/S23 1001x300 4096" "/2/3 4133x97 8192" "B2-a/S12 1001x300 4096"; do
    set -- $spec
    rule=$1 size=$2 gens=$3 w=${size%x*} h=${size#*x}
    for top in T P; do
      r=$(LIFEGEN_CPU_CODE=native rate "$BIN" bench --backend cpu --threads 1 --rule "$rule:$top$w,$h" --size "$size" --gens "$gens" --runs 3)
      echo "round $round native $rule $size :$top $r"
    done
    r=$(rate "$BIN" bench --backend cpu --threads 1 --rule "$rule:T$w,$h" --size "$size" --gens "$gens" --runs 3)
    echo "round $round default $rule $size :T $r"
  done
done
