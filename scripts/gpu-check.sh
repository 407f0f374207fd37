#!/usr/bin/env bash
# The GPU checks and measurements of issue 4, in one go on a machine with a CUDA GPU.
# Expects release binaries in .gpu/ (see scripts/gpu-build.sh); writes a log to ${OUT:-.}/gpu-check.log.
# Usage: scripts/gpu-check.sh [quick|full|profile] [plans...]
#   quick: tests and the plan sweep; full: also ceilings, sanitizer and the largest universes;
#   profile: also an Nsight Compute report of the default kernel.
set -u
mode=${1:-full}; shift || true
plans=${*:-"k2-t10-funnel k2-t8-funnel k2-t12-funnel k2-t10-multiply k1-t10-funnel k1-t16-funnel k4-t5-funnel"}
log=${OUT:-.}/gpu-check.log
exec > >(tee "$log") 2>&1
G=.gpu
step() { echo; echo "=== $* ($(date +%T))"; }
step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
step "tests/gpu (LIFEGEN_REQUIRE_GPU=1)"; LIFEGEN_REQUIRE_GPU=1 $G/test-gpu --test-threads 1 2>&1 | tail -15
if [ "$mode" = full ]; then
  step "tests/backends (auto picks the GPU)"; $G/test-backends 2>&1 | tail -5
  step "compute-sanitizer memcheck"; compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --size 4160x300 --gens 23 2>&1 | tail -8
  step "ceilings"; $G/lifegen bench --ceilings
fi
for plan in $plans; do
  step "bench $plan 65536x65536"; $G/lifegen bench --backend gpu --size 65536x65536 --gens 1024 --runs 5 --plan $plan 2>&1 | grep -E 'backend|run 1|cell updates|error'
done
for rule in B36/S23 B2/S B1357/S1357; do
  step "bench $rule 65536x65536"; $G/lifegen bench --backend gpu --rule $rule --size 65536x65536 --gens 1024 --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'
done
step "bench default 16384x16384"; $G/lifegen bench --backend gpu --size 16384x16384 --gens 1024 --runs 5
if [ "$mode" = profile ]; then
  step "ncu, default plan, 65536x65536"
  ncu -k regex:lifegen_stream_life_b3s23 --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats \
    $G/lifegen bench --backend gpu --size 65536x65536 --gens 40 --runs 1 2>&1 | grep -vE '^\s*$' | tail -90
  step "ncu stall reasons"
  m=smsp__warp_issue_stalled
  ncu -k regex:lifegen_stream_life_b3s23 --launch-skip 3 --launch-count 1 --metrics \
${m}_short_scoreboard_per_warp_active.pct,${m}_long_scoreboard_per_warp_active.pct,${m}_wait_per_warp_active.pct,${m}_math_pipe_throttle_per_warp_active.pct,${m}_no_instruction_per_warp_active.pct,${m}_not_selected_per_warp_active.pct,${m}_dispatch_stall_per_warp_active.pct,${m}_selected_per_warp_active.pct,${m}_mio_throttle_per_warp_active.pct,${m}_lg_throttle_per_warp_active.pct,${m}_branch_resolving_per_warp_active.pct,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active \
    $G/lifegen bench --backend gpu --size 65536x65536 --gens 40 --runs 1 2>&1 | grep -E 'stalled|pipe' 
  for rows in 1058 529 265; do
    step "segments of $rows rows"; LIFEGEN_GPU_SEGMENT_ROWS=$rows $G/lifegen bench --backend gpu --size 65536x65536 --gens 1024 --runs 3 2>&1 | grep -E 'backend|cell updates/s: '
  done
fi
[ "$mode" = full ] || exit 0
step "largest universe 262144x262144"; $G/lifegen run --backend gpu --size 262144x262144 --gens 100
step "too large for the GPU"; $G/lifegen run --backend gpu --input tests/data/glider_cxrle.rle --size 622592x622592 --gens 1; echo "exit $?"
