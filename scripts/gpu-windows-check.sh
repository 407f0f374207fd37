#!/usr/bin/env bash
# Von Neumann and circular windows against the Moore box on a CUDA GPU (issue 18, item 4): the
# GPU LtL tests (every shape, radii 1..16), compute-sanitizer on the new kernels, then NM, NN and
# NC at r = 8 and 16 in one run, by default and with the choices that trade registers and rings.
# Expects release binaries in .gpu/ (scripts/gpu-build.sh); writes ${OUT:-.}/gpu-windows-check.log.
# Usage: scripts/gpu-windows-check.sh [size] [gens]   (default 60416 100, CAT's universe)
set -u
size=${1:-60416}; gens=${2:-100}
log=${OUT:-.}/gpu-windows-check.log
exec > >(tee "$log") 2>&1
G=.gpu
step() { echo; echo "=== $* ($(date +%T))"; }
bench() { $G/lifegen bench --backend gpu --rule "$1" --size ${size}x${size} --gens $gens --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'; }
step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
step "tests/gpu_ltl (LIFEGEN_REQUIRE_GPU=1)"
LIFEGEN_REQUIRE_GPU=1 $G/test-gpu_ltl --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -40
step "compute-sanitizer memcheck, R16 NN and NC"
for n in N C; do
  compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule R16,C0,M1,S170..296,B170..300,N$n --size 640x97 --gens 3 2>&1 | tail -3
done
rules="R8,C0,M0,S163..223,B74..252,NM R8,C0,M0,S40..80,B41..80,NN R8,C0,M0,S60..125,B62..125,NC
R16,C0,M0,S170..296,B170..300,NM R16,C0,M0,S170..296,B170..300,NN R16,C0,M0,S170..296,B170..300,NC"
for rule in $rules; do step "bench $rule ${size}x${size}"; bench "$rule"; done
for rule in $rules; do step "bench $rule, 1 word a lane"; LIFEGEN_GPU_LTL_WORDS=1 bench "$rule"; done
for r in R8,C0,M0,S40..80,B41..80,NN R16,C0,M0,S170..296,B170..300,NN; do
  step "bench $r, diagonal lines in rings (history delay), 1 word a lane"
  LIFEGEN_GPU_LTL_HISTORY=delay LIFEGEN_GPU_LTL_WORDS=1 bench "$r"
done
