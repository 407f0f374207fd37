#!/usr/bin/env bash
# The life-like kernels through the kernel IR's PTX back end beside the emitter written for
# them: GPU tests with each, compute-sanitizer, and the bench at 65536^2 in one go.
# Expects release binaries in .gpu/ (scripts/gpu-build.sh); writes ${OUT:-.}/gpu-life-ir-check.log.
# Env: TESTS=0 skips the tests; PLANS="k2-t10-funnel ..." the plans benched with both kernels.
set -u
log=${OUT:-.}/gpu-life-ir-check.log
exec > >(tee "$log") 2>&1
G=.gpu
step() { echo; echo "=== $* ($(date +%T))"; }
step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
if [ "${TESTS:-1}" = 1 ]; then
  for kernel in row-shared stream; do
    step "tests/gpu, LIFEGEN_GPU_LIFE_KERNEL=$kernel"
    LIFEGEN_GPU_LIFE_KERNEL=$kernel LIFEGEN_REQUIRE_GPU=1 $G/test-gpu --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -20
  done
  step "tests/gpu_ltl"
  LIFEGEN_REQUIRE_GPU=1 $G/test-gpu_ltl --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -20
  step "compute-sanitizer memcheck: life through the IR, R2 (load ring) and R16"
  LIFEGEN_GPU_LIFE_KERNEL=stream compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule B3/S23 --size 1056x300 --gens 25 2>&1 | tail -3
  compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule R2,C0,M0,S7..12,B8..11,NM --size 1056x300 --gens 5 2>&1 | tail -3
  compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule R16,C0,M1,S170..296,B170..300,NN --size 640x97 --gens 3 2>&1 | tail -3
fi
for plan in ${PLANS:-k2-t10-funnel}; do
  for kernel in row-shared stream; do
    step "bench B3/S23 65536^2 x 1024, plan $plan, kernel $kernel"
    LIFEGEN_GPU_LIFE_KERNEL=$kernel $G/lifegen bench --backend gpu --size 65536x65536 --gens 1024 --runs 5 --plan $plan 2>&1 | grep -E 'backend|cell updates/s: |error'
  done
done
for rule in ${RULES-R2,C0,M0,S7..12,B8..11,NM R16,C0,M0,S170..296,B170..300,NM}; do
  step "bench $rule 60416^2 x 100"
  $G/lifegen bench --backend gpu --rule "$rule" --size 60416x60416 --gens 100 --runs 5 2>&1 | grep -E 'backend|cell updates/s: |error'
done
