#!/usr/bin/env bash
# x86 instructions a cell update on the CPU backend, counted by valgrind (cachegrind, no cache
# simulation): deterministic where the shared machine's timings are not. Each case runs
# `lifegen bench --runs 1` (a warm-up and one timed run) at G1 and at G2 generations; the
# difference is 2 (G2 - G1) generations of W x H cells, so set-up and compilation cancel.
# Usage: scripts/cpu-instructions.sh [lifegen binary] "RULE[:T|:P] WxH" ...  (env: G1, G2, and
# LIFEGEN_* variables pass through)
set -u
BIN=${1:-target/release/lifegen}; shift
G1=${G1:-16} G2=${G2:-80}
irefs() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$BIN" bench --backend cpu --threads 1 --rule "$1" --size "$2" --gens "$3" --runs 1 2>&1 |
    awk '/I *refs:/ {gsub(",", "", $4); print $4}'
}
for case in "$@"; do
  set -- $case
  rule=$1 size=$2 w=${2%x*} h=${2#*x}
  a=$(irefs "$rule" "$size" "$G1") b=$(irefs "$rule" "$size" "$G2")
  echo "$rule $size: $(python3 -c "print('%.3f' % (($b - $a) / (2 * ($G2 - $G1) * $w * $h)))") instructions a cell update"
done
