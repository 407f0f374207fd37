#!/usr/bin/env bash
# Issue 18's GPU checks and figures in one place: the GPU tests with every kernel through the IR,
# compute-sanitizer, life-like and Larger-than-Life rates beside a baseline build, the search cache
# and the band drivers. Expects release binaries in .gpu/ (scripts/gpu-build.sh) and a baseline's
# lifegen in ${BASE:-.gpu-base}/ (e.g. 8c15b31's). Writes ${OUT:-.}/gpu-issue18-<part>.log.
# Usage: PARTS="tests life ltl search bands" scripts/gpu-issue18-check.sh
set -u
G=.gpu; base=${BASE:-.gpu-base}
step() { echo; echo "=== $* ($(date +%T))"; }
bench() { local dir=$1 rule=$2 size=$3 gens=$4; shift 4
  "$dir"/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $gens --runs ${RUNS:-3} "$@" 2>&1 | grep -E 'backend|cell updates/s: |error'; }
for part in ${PARTS:-tests life ltl search bands}; do
  exec > >(tee "${OUT:-.}/gpu-issue18-$part.log") 2>&1
  case $part in
  tests)
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    for t in gpu gpu_ltl backends; do
      step "tests/$t (LIFEGEN_REQUIRE_GPU=1)"
      LIFEGEN_REQUIRE_GPU=1 $G/test-$t --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -12
    done
    step "compute-sanitizer memcheck"
    compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule B3/S23 --size 1056x300 --gens 25 2>&1 | tail -1
    compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule B36/S125 --size 2080x77 --gens 13 2>&1 | tail -1
    for rule in R2,C0,M0,S7..12,B8..11,NM R7,C0,M0,S40..80,B41..60,NM R16,C0,M1,S170..296,B170..300,NN R16,C0,M1,S170..296,B170..300,NC; do
      for k in 1 2; do LIFEGEN_GPU_LTL_WORDS=$k compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule $rule --size 1056x97 --gens 3 2>&1 | tail -1; done
    done ;;
  life)
    for rule in B3/S23 B36/S23 B2/S B1357/S1357 B36/S125 B35/S236 B24/S35; do
      for dir in "$base" $G; do step "$rule 65536^2 x 1024, $dir"; bench $dir $rule 65536 1024; done
    done
    step "B3/S23 16384^2"; bench $G B3/S23 16384 1024
    for plan in k1-t10-funnel k2-t8-funnel k2-t12-funnel k2-t10-multiply; do step "plan $plan"; bench $G B3/S23 65536 1024 --plan $plan; done ;;
  ltl)
    for rule in R2,C0,M0,S7..12,B8..11,NM R8,C0,M0,S40..60,B40..50,NM R8,C0,M0,S40..60,B40..50,NN R8,C0,M0,S40..60,B40..50,NC \
                R16,C0,M0,S170..296,B170..300,NM R16,C0,M0,S170..296,B170..300,NN R16,C0,M0,S170..296,B170..300,NC; do
      for dir in "$base" $G; do step "$rule 60416^2 x 100, $dir"; bench $dir $rule 60416 100; done
    done
    for rule in R16,C0,M0,S170..296,B170..300,NN R16,C0,M0,S170..296,B170..300,NC; do
      step "$rule, 1 word a lane"; LIFEGEN_GPU_LTL_WORDS=1 bench $G $rule 60416 100
      step "$rule, 2 warps a block"; LIFEGEN_GPU_STREAM_BLOCK_WARPS=2 bench $G $rule 60416 100
    done ;;
  search)
    BIN=$G RULES=${SEARCH_RULES:-5} SWITCH_GENS=${SWITCH_GENS:-30000000} bash scripts/search_cache_gpu.sh ${SEARCH_SECONDS:-20} ;;
  bands)
    PARTS="small multi" bash scripts/gpu-ooc-check.sh ;;
  esac
done
