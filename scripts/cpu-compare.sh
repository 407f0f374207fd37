#!/usr/bin/env bash
# Issue 5's CPU comparison in one run: lifegen's generated tile kernels (each instruction set,
# one thread, then all threads) and the plain bit-sliced C loop, B3/S23 on a 16384^2 torus.
# Usage: scripts/cpu-compare.sh [gens]   (run after `cargo build --release`)
set -eu
gens=${1:-256}
bin=target/release/lifegen
gcc -O3 -march=native -o target/bitsliced_life benches/c/bitsliced_life.c
echo "== commit $(git rev-parse --short HEAD), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) threads"
for isa in avx512 avx2 portable; do
  echo "== lifegen, $isa, 1 thread"
  LIFEGEN_CPU_ISA=$isa $bin bench --backend cpu --size 16384x16384 --gens "$gens" --runs 5 --threads 1 | grep -E '^backend|^run|cell updates/s:'
done
echo "== lifegen, all threads"
$bin bench --backend cpu --size 16384x16384 --gens "$gens" --runs 5 | grep -E '^backend|^run|cell updates/s:'
echo "== plain bit-sliced C loop (gcc -O3 -march=native), 1 thread, 100 generations, three runs"
for run in 1 2 3; do target/bitsliced_life 16384 16384 100 | grep 'cell updates'; done
