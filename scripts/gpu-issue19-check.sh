#!/usr/bin/env bash
# Issue 19's GPU checks and figures: the GPU tests (rules given by their 3x3 table among them),
# compute-sanitizer on map-rule kernels, and the rates of the rules beside B3/S23 in the
# same call. Expects release binaries in .gpu/ (scripts/gpu-build.sh). Writes
# ${OUT:-.}/gpu-issue19-<part>.log. Usage: PARTS="tests rates" scripts/gpu-issue19-check.sh
set -u
G=.gpu
step() { echo; echo "=== $* ($(date +%T))"; }
bench() { local rule=$1 size=$2 gens=$3; shift 3
  $G/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $gens --runs ${RUNS:-3} "$@" 2>&1 | grep -E 'backend|cell updates/s: |error'; }
RULES=${RULES:-"B3/S23 B2-a/S12 B3/S2-i34q B2ce3aeiknrjy/S23-a B3/S23-a B2/S34H B13/S012V MAPeQv8IB8hdY88yTdTxBYqnaHqkpIBAF6PdB8uQ2+bvJf2Mbm+ZMCylH4zBTuJoqTDdcYDkzqXqLjH7v8f9uKGgw"}
for part in ${PARTS:-tests rates}; do
  exec > >(tee "${OUT:-.}/gpu-issue19-$part.log") 2>&1
  case $part in
  tests)
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    step "tests/gpu (LIFEGEN_REQUIRE_GPU=1)"
    LIFEGEN_REQUIRE_GPU=1 $G/test-gpu --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -12
    step "compute-sanitizer memcheck"
    for rule in B2-a/S12 B2/S34H B13/S012V; do
      compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule $rule --size 1056x300 --gens 25 2>&1 | tail -1
    done ;;
  rates)
    for rule in $RULES; do step "$rule 65536^2 x 1024"; bench "$rule" 65536 1024; done ;;
  esac
done
