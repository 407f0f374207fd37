#!/usr/bin/env bash
# The Larger-than-Life GPU checks and the CAT suite, in one go on a machine with a CUDA GPU.
# Expects release binaries in .gpu/ (scripts/gpu-build.sh); writes ${OUT:-.}/gpu-ltl-check.log.
# Usage: scripts/gpu-ltl-check.sh [size] [gens]   (default 60416 100, CAT's universe)
set -u
size=${1:-60416}; gens=${2:-100}
log=${OUT:-.}/gpu-ltl-check.log
exec > >(tee "$log") 2>&1
G=.gpu
step() { echo; echo "=== $* ($(date +%T))"; }
step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
[ "${TESTS:-1}" = 1 ] && step "tests/gpu_ltl (LIFEGEN_REQUIRE_GPU=1)" && LIFEGEN_REQUIRE_GPU=1 $G/test-gpu_ltl --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -40
step "compute-sanitizer memcheck, R7 and R16"
compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule R7,C0,M0,S101..201,B75..170,NM --size 1056x300 --gens 5 2>&1 | tail -4
compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule R16,C0,M1,S170..296,B170..300,NN --size 640x97 --gens 3 2>&1 | tail -4
[ "${SUITE:-1}" = 1 ] && grep -v '^#' benchmarks/cat-suite.txt | while read -r r rule density rest; do
  [ -n "$r" ] || continue
  step "bench CAT r=$r $rule ${size}x${size} x $gens"
  $G/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $gens --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'
done
for h in ${HISTORIES-delay recompute paired}; do
  for sh in ${SHIFTS-funnel multiply}; do
    for rule in R4,C2,M0,S40..80,B41..80,NM R8,C0,M0,S163..223,B74..252,NM R16,C0,M0,S170..296,B170..300,NM; do
      step "bench $rule history $h shifts $sh"
      LIFEGEN_GPU_LTL_HISTORY=$h LIFEGEN_GPU_LTL_SHIFTS=$sh $G/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $gens --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'
    done
  done
done
for k in ${WORDS:-}; do
  for rule in R4,C2,M0,S40..80,B41..80,NM R8,C0,M0,S163..223,B74..252,NM R16,C0,M0,S170..296,B170..300,NM; do
    step "bench $rule words a lane $k"
    LIFEGEN_GPU_LTL_WORDS=$k $G/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $gens --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'
  done
done
for rows in ${SEGMENTS:-}; do
  step "bench R16 segments of $rows rows"
  LIFEGEN_GPU_STREAM_SEGMENT_ROWS=$rows $G/lifegen bench --backend gpu --rule R16,C0,M0,S170..296,B170..300,NM --size ${size}x${size} --gens $gens --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'
done
for n in N C; do
  step "bench R16 N$n ${size}x${size}"
  $G/lifegen bench --backend gpu --rule "R16,C0,M0,S100..300,B100..200,N$n" --size ${size}x${size} --gens 20 --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'
done
