#!/usr/bin/env bash
# The bounded search for rules without a record (BENCHMARKS.md, "search cache"): the gate counts
# lowered and after the search for 20 random life-like rules (seed 18), then the wall-clock time of
# `lifegen run --rule R --size 4096x4096 --gens 1` from a cold cache and a warm one for each.
# Usage: scripts/search_cache_bench.sh [BACKEND] [SECONDS]   (auto and 1.5 by default)
set -euo pipefail
backend=${1:-auto}
seconds=${2:-1.5}
cargo build --release --quiet
cargo build --release --quiet -p lifegen-gen --example on_demand_search
table=$(./target/release/examples/on_demand_search 20 18 "$seconds")
echo "$table"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
echo
echo "| rule | cold s | warm s | network (warm) |"
echo "|---|---|---|---|"
for rule in $(echo "$table" | tail -n +3 | cut -d'|' -f2); do
  for state in cold warm; do
    start=$(date +%s.%N)
    out=$(LIFEGEN_CACHE_DIR=$cache ./target/release/lifegen run --rule "$rule" --size 4096x4096 \
      --gens 1 --backend "$backend" --search-seconds "$seconds")
    end=$(date +%s.%N)
    eval "$state=$(echo "$end - $start" | bc)"
  done
  network=$(echo "$out" | sed -n 's/^network: [^:]*: a combine network of \([0-9]*\) LUT3.*/\1 LUT3/p')
  echo "| $rule | $cold | $warm | $network |"
done
