#!/usr/bin/env bash
# Shifted tori, Klein bottles, cross-surfaces and spheres on the GPU (issue 19): the GPU test against the
# reference, compute-sanitizer on small universes of each, bgolly against the GPU
# (scripts/golly/compare.py) and the rates at 65536^2 beside the torus's. Expects in $G:
# lifegen, test-topologies, bgolly. Writes ${OUT:-.}/gpu-topologies.log.
set -u
G=$(realpath ${G:-.gpu/topologies})
step() { echo; echo "=== $* ($(date +%T))"; }
bench() {
  $G/lifegen bench --backend gpu --rule "$1" --size 65536x65536 --gens ${GENS:-1024} --runs ${RUNS:-3} 2>&1 \
    | grep -E 'backend|commit|cell updates/s: |error'
}
{
  step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
  step "tests/topologies gpu (LIFEGEN_REQUIRE_GPU=1)"
  LIFEGEN_REQUIRE_GPU=1 timeout 240 $G/test-topologies gpu --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -8
  step "compute-sanitizer memcheck"
  for rule in 'B3/S23:K4133*,97' 'B3/S23:C4133,97' 'B3/S23:S2100' '/2/3:K4133,97*' \
      'B3/S23:T4133+7,97' '/2/3:T4133,97-5'; do
    compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule "$rule" --gens 25 2>&1 | tail -1
  done
  step "scripts/golly/compare.py --backends gpu"
  for t in 'K*' K C T+ T,+; do
    python3 ${COMPARE:-scripts/golly/compare.py} --topology "$t" --backends gpu --bgolly $G/bgolly --lifegen $G/lifegen \
      --rules 'B3/S23;/2/3;B2-a/S12' --sizes 4133x97 --gens 23 --seeds 1 --quiet 2>&1 | tail -1
  done
  python3 ${COMPARE:-scripts/golly/compare.py} --topology S --backends gpu --bgolly $G/bgolly --lifegen $G/lifegen \
    --rules 'B3/S23;/2/3' --sizes 2100x2100 --gens 9 --seeds 1 --quiet 2>&1 | tail -1
  for rule in 'B3/S23:T65536,65536' 'B3/S23:T65536+1,65536' 'B3/S23:K65536*,65536' \
      'B3/S23:C65536,65536' 'B3/S23:S65536'; do
    step "$rule (65536^2 x ${GENS:-1024})"; bench "$rule"
  done
} 2>&1 | tee "${OUT:-.}/gpu-topologies.log"
