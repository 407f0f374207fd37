#!/usr/bin/env bash
# The shared-memory input ring (many input depths: NN, NC columns) on a CUDA GPU: tests/gpu_ltl
# (every shape and radius against the reference), compute-sanitizer on R16 NN and NC, then NM, NN
# and NC at r = 8 and 16 with this build (.gpu/) and a baseline build (${BASE:-.gpu-base}/, e.g.
# scripts/gpu-build.sh at f472063 copied there) in one run, one and two words a lane, and NN, NC
# at two words with 2 warps a block (the emitter chooses 1 there: 4 rings of 17 KiB exceed 48 KiB).
# Writes ${OUT:-.}/gpu-loads-check.log. Usage: scripts/gpu-loads-check.sh [size] [gens]
set -u
size=${1:-60416}; gens=${2:-100}; base=${BASE:-.gpu-base}
log=${OUT:-.}/gpu-loads-check.log
exec > >(tee "$log") 2>&1
step() { echo; echo "=== $* ($(date +%T))"; }
bench() { "$1"/lifegen bench --backend gpu --rule "$2" --size ${size}x${size} --gens $gens --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'; }
step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
step "tests/gpu_ltl (LIFEGEN_REQUIRE_GPU=1)"
LIFEGEN_REQUIRE_GPU=1 .gpu/test-gpu_ltl --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -40
step "compute-sanitizer memcheck, R16 NN and NC, 1 and 2 words a lane"
for n in N C; do for k in 1 2; do
  LIFEGEN_GPU_LTL_WORDS=$k compute-sanitizer --tool memcheck .gpu/lifegen run --backend gpu --rule R16,C0,M1,S170..296,B170..300,N$n --size 640x97 --gens 3 2>&1 | tail -3
done; done
rules="R8,C0,M0,S40..60,B40..50,NM R8,C0,M0,S40..60,B40..50,NN R8,C0,M0,S40..60,B40..50,NC
R16,C0,M0,S170..296,B170..300,NM R16,C0,M0,S170..296,B170..300,NN R16,C0,M0,S170..296,B170..300,NC"
for k in 2 1; do for rule in $rules; do for dir in "$base" .gpu; do
  step "bench $rule ${size}x${size}, $k words a lane, $dir"; LIFEGEN_GPU_LTL_WORDS=$k bench "$dir" "$rule"
done; done; done
for rule in R16,C0,M0,S170..296,B170..300,NN R16,C0,M0,S170..296,B170..300,NC; do for w in 2; do
  step "bench $rule, 2 words a lane, $w warps a block, .gpu"
  LIFEGEN_GPU_STREAM_BLOCK_WARPS=$w bench .gpu "$rule"
done; done
