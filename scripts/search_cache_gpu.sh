#!/usr/bin/env bash
# GPU figures of the search cache (BENCHMARKS.md, "search cache"), for the 20 random rules of
# scripts/search_cache_bench.sh (seed 18): for each rule, `lifegen bench` at 65536x65536 with
# no search (the lowered network), then after a search of SECONDS into an empty cache (`count`
# runs it), with the network each got; then a run that switches networks mid-run checked against
# the CPU bit for bit.  Usage: scripts/search_cache_gpu.sh [SECONDS]   (60 by default)
# SEED and RULES pick other random rules (issue 30's twelve: SEED=30 RULES=12); SWITCH=0 leaves
# the switch out.
set -euo pipefail
seconds=${1:-60}
# On a machine without cargo: BIN=.gpu (lifegen and on_demand_search, as scripts/gpu-build.sh
# leaves them) and RULES=N for the first N rules only.
bin=${BIN:-./target/release}
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
  cargo build --release --quiet -p lifegen-gen --example on_demand_search
  cp ./target/release/examples/on_demand_search ./target/release/
fi
rules=$("$bin"/on_demand_search "${RULES:-20}" "${SEED:-18}" 0 | tail -n +3 | cut -d'|' -f2)
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export LIFEGEN_CACHE_DIR=$cache
echo "| rule | lowered cell updates/s | combine LUT3 after ${seconds} s | searched cell updates/s |"
echo "|---|---|---|---|"
for rule in $rules; do
  rate() { "$bin"/lifegen bench --rule "$rule" --size 65536x65536 --backend gpu "$@" |
    sed -n 's/.*cell updates\/s[^0-9]*\([0-9.e+]*\).*/\1/p' | tail -1; }
  lowered=$(LIFEGEN_SEARCH_SECONDS=0 LIFEGEN_CACHE_DIR=$(mktemp -d) rate)
  gates=$(LIFEGEN_SEARCH_SECONDS=$seconds "$bin"/lifegen count --rule "$rule" |
    sed -n 's/^network: [^:]*: a combine network of \([0-9]*\) LUT3.*/\1/p')
  echo "| $rule | $lowered | $gates | $(rate) |"
done
[ "${SWITCH:-1}" = 0 ] && exit 0
# The switch: a GPU run long enough (about a minute on an H100) for the search beside it to end,
# against the same run on the lowered network; both universes must be identical.
rule=B012468/S13457
gens=${SWITCH_GENS:-30000000}
switch=$(mktemp -d)
LIFEGEN_CACHE_DIR=$switch "$bin"/lifegen run --rule "$rule" --size 4096x4096 \
  --gens "$gens" --backend gpu --search-beside-seconds 10 --output "$switch/switched.rle" 2>&1 |
  tee "$switch/log"
LIFEGEN_CACHE_DIR=$(mktemp -d) "$bin"/lifegen run --rule "$rule" --size 4096x4096 \
  --gens "$gens" --backend gpu --search-seconds 0 --search-beside-seconds 0 \
  --output "$switch/lowered.rle" > /dev/null
cmp "$switch/switched.rle" "$switch/lowered.rle" && echo "the switched run is identical"
grep -h "^gates:\|^seconds:" "$switch"/v1/*/*.txt
