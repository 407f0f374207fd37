#!/usr/bin/env bash
# The unbounded-plane issue's GPU goal: the tiles' rate at full activity against the dense torus's.
# Random soups of 4096^2 and 16384^2 (density 0.5, seed 1) to 1000 on the plane's active tiles,
# held on the GPU, in tiles of 128, 512 and 1024 and with no --tile (the default), against the
# same size of torus, each run's printed stepping time and rate (every cell of every tile
# stepped, a generation each), ROUNDS rounds alternating; an older build in OLD (a path to its
# lifegen) runs beside in each round, and the RLEs at 1000 of both are compared.
# Lay out a folder with lifegen (scripts/gpu-build.sh), then on the device:
#   [OLD=folder/old/lifegen] [ROUNDS=3] scripts/gpu-plane-tiles-rate.sh FOLDER
set -u
cd "${1:-$(dirname "$0")}"
nvidia-smi --query-gpu=name --format=csv,noheader
for n in 4096 16384; do
  ./lifegen run --size ${n}x${n} --gens 0 --output torus$n.rle > /dev/null
  sed '1s/:T[0-9,]*//' torus$n.rle > soup$n.rle
done
run() {
  local label=$1 bin=$2; shift 2
  local out; out=$(timeout 120 "$bin" run "$@" 2>&1)
  echo "$label $(echo "$out" | grep -o 'generations: [0-9]* in [0-9.]* s') $(echo "$out" | grep -o 'cell updates/s: [0-9.e]*')"
}
for round in $(seq "${ROUNDS:-3}"); do
  echo "== round $round"
  for n in 4096 16384; do
    run "dense $n" ./lifegen --size ${n}x${n} --gens 1000 --backend gpu
    for t in 128 512 1024 default; do
      tile=(--tile $t); [ $t = default ] && tile=()
      [ -n "${OLD:-}" ] && run "old $n tiles $t" "$OLD" --input soup$n.rle --gens 1000 --algo tiles --backend gpu "${tile[@]}"
      run "new $n tiles $t" ./lifegen --input soup$n.rle --gens 1000 --algo tiles --backend gpu "${tile[@]}"
    done
  done
done
if [ -n "${OLD:-}" ]; then
  for n in 4096 16384; do
    "$OLD" run --input soup$n.rle --gens 1000 --algo tiles --backend gpu --output old$n.rle > /dev/null 2>&1
    ./lifegen run --input soup$n.rle --gens 1000 --algo tiles --backend gpu --output new$n.rle > /dev/null 2>&1
    cmp old$n.rle new$n.rle && echo "soup $n: the builds' RLEs at 1000 are identical"
  done
fi
