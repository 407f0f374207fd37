#!/usr/bin/env bash
# Issue 30's GPU rows against the machine's own limits, in one call: the GPU's issue ceilings
# (`lifegen bench --ceilings`), then for each kernel of the issue's table its rate at the issue's
# size and Nsight Compute's counts of one launch (warp instructions by pipe, how busy the ALU
# pipe and the schedulers were, where warps stalled). A kernel whose ALU pipe is busy nearly all
# the time runs at the rate its instructions allow; the rate the goal asks then needs fewer.
# Expects the release binary in G (default .gpu/, scripts/gpu-build.sh); writes
# ${OUT:-.}/gpu-issue30-limits.log.
set -u
G=${G:-.gpu}
exec > >(tee "${OUT:-.}/gpu-issue30-limits.log") 2>&1
step() { echo; echo "=== $* ($(date +%T))"; }
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
s=smsp__warp_issue_stalled
METRICS=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,\
sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_lsu.sum,\
sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,\
sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,\
smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,\
${s}_math_pipe_throttle_per_warp_active.pct,${s}_long_scoreboard_per_warp_active.pct,\
${s}_short_scoreboard_per_warp_active.pct,${s}_wait_per_warp_active.pct,\
${s}_no_instruction_per_warp_active.pct,${s}_not_selected_per_warp_active.pct,\
${s}_selected_per_warp_active.pct,${s}_barrier_per_warp_active.pct,${s}_mio_throttle_per_warp_active.pct,\
dram__bytes.sum,l1tex__t_bytes.sum
# rule size gens (bench) gens (ncu run)
KERNELS=${KERNELS:-"B3/S23:65536:1024:40 B3/S2-i34q:65536:1024:40 B2ce3aeiknrjy/S23-a:65536:1024:40 \
R16,C0,M0,S170..296,B170..300,NM:60416:100:4 R16,C0,M0,S170..296,B170..300,NN:60416:100:4 \
R16,C0,M0,S170..296,B170..300,NC:60416:100:4 R16,C0,M0,S170..296,B170..300,N2:60416:100:4"}

step device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
step "issue ceilings"; $G/lifegen bench --backend gpu --ceilings 2>&1
for k in $KERNELS; do
  IFS=: read -r rule size gens ncu_gens <<<"$k"
  step "$rule ${size}^2 x $gens"
  $G/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $gens --runs 3 2>&1 \
    | grep -E 'backend|kernel|cell updates/s: |error'
  step "ncu $rule ${size}^2, one launch"
  $NCU --clock-control none -k regex:lifegen_stream --launch-skip 2 --launch-count 1 --metrics $METRICS \
    $G/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $ncu_gens --runs 1 2>&1 \
    | grep -E 'lifegen_stream|Block Size|Grid Size|__|==ERROR|error' | sed 's/  */ /g'
done
step "B3/S23 65536^2 x 1024 again"
$G/lifegen bench --backend gpu --size 65536x65536 --gens 1024 --runs 3 2>&1 | grep -E 'cell updates/s: '
