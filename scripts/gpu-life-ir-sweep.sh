#!/usr/bin/env bash
# Life-like kernels through the kernel IR: correctness with the shapes under test, then a sweep of
# shapes (plan, warps a block, segment rows). (Until the IR kernel overtook it, this compared
# against the dedicated life emitter, since retired: BENCHMARKS.md has those figures.)
# Expects release binaries in .gpu/ (scripts/gpu-build.sh); writes ${OUT:-.}/gpu-life-ir-sweep.log.
# Env: TESTS=0 skips the tests; SWEEP="plan:warps:segment:VAR=value ..." (empty fields: the
# defaults; the fourth an extra environment variable); NCU=1 adds Nsight Compute's warp-state and
# pipe figures for the default kernel.
set -u
log=${OUT:-.}/gpu-life-ir-sweep.log
exec > >(tee "$log") 2>&1
G=.gpu
step() { echo; echo "=== $* ($(date +%T))"; }
step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
if [ "${TESTS:-1}" = 1 ]; then
  step "tests/gpu"
  LIFEGEN_REQUIRE_GPU=1 $G/test-gpu --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -12
  step "tests/gpu_ltl"
  LIFEGEN_REQUIRE_GPU=1 $G/test-gpu_ltl --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -12
  step "compute-sanitizer memcheck: life through the IR, R2 (load ring), R7 (shared rings), R16 NN"
  compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule B3/S23 --size 1056x300 --gens 25 2>&1 | tail -2
  for rule in R2,C0,M0,S7..12,B8..11,NM R7,C0,M0,S40..80,B41..60,NM R16,C0,M1,S170..296,B170..300,NN; do
    compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule $rule --size 1056x97 --gens 3 2>&1 | tail -2
  done
fi
bench() { env ${EXTRA:-} $G/lifegen bench --backend gpu --size 65536x65536 --gens 1024 --runs 5 "$@" 2>&1 | grep -E 'backend|cell updates/s: |error'; }
for shape in ${SWEEP:-k2-t10-funnel:1: k2-t10-funnel:4: k2-t10-funnel:4:705 k2-t10-funnel:4:1058 k1-t10-funnel:4: k1-t12-funnel:4: k1-t14-funnel:4: k1-t16-funnel:4: k2-t12-funnel:4:}; do
  IFS=: read -r plan warps rows extra <<<"$shape"
  step "IR $plan, warps a block ${warps:-default}, segment ${rows:-chosen} ${extra}"
  EXTRA="$extra LIFEGEN_GPU_STREAM_BLOCK_WARPS=$warps LIFEGEN_GPU_STREAM_SEGMENT_ROWS=$rows" bench --plan $plan
done
if [ "${NCU:-0}" = 1 ]; then
  m=smsp__warp_issue_stalled
  metrics=${m}_short_scoreboard_per_warp_active.pct,${m}_long_scoreboard_per_warp_active.pct,${m}_wait_per_warp_active.pct,${m}_math_pipe_throttle_per_warp_active.pct,${m}_no_instruction_per_warp_active.pct,${m}_not_selected_per_warp_active.pct,${m}_selected_per_warp_active.pct,${m}_mio_throttle_per_warp_active.pct,${m}_lg_throttle_per_warp_active.pct,${m}_barrier_per_warp_active.pct,${m}_branch_resolving_per_warp_active.pct,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_elapsed.max,l1tex__t_bytes.sum,dram__bytes.sum
  for plan in k2-t10-funnel; do
    step "ncu $plan"
    env ${NCU_EXTRA:-} ncu --launch-skip 3 --launch-count 1 --metrics $metrics \
      $G/lifegen bench --backend gpu --size 65536x65536 --gens 40 --runs 1 --plan $plan 2>&1 | grep -E 'stalled|pipe|warps_active|inst_executed|cycles|bytes|lifegen_'
  done
fi
