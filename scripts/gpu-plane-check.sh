#!/usr/bin/env bash
# Bounded planes on the GPU (issue 19, the plane within 1.1x of the torus): the plane and GPU
# tests, compute-sanitizer on planes that split into an interior and edges, bgolly against the
# GPU on planes (scripts/golly/compare.py), Nsight Compute on the torus and plane kernels, and
# the torus/plane rate pairs back to back. Expects in $G: lifegen, test-plane, test-gpu, bgolly
# (target/golly/bgolly) and, for the figures before, lifegen-old (a build of the commit before).
# Writes ${OUT:-.}/gpu-plane-<part>.log. Usage: PARTS="tests ncu rates variants edges" TESTS="plane gpu"
# [TEST_FILTER="name ..."] scripts/gpu-plane-check.sh
set -u
G=$(realpath ${G:-.gpu})
step() { echo; echo "=== $* ($(date +%T))"; }
bench() { local bin=$1 rule=$2
  $bin bench --backend gpu --rule "$rule" --size 65536x65536 --gens 1024 --runs ${RUNS:-3} 2>&1 \
    | grep -E 'backend|commit|population|cell updates/s: |error'; }
LTL=R5,C0,M1,S34..58,B34..45,NM
run_part() {
  case $1 in
  tests)
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    for t in ${TESTS:-plane}; do
      step "tests/$t (LIFEGEN_REQUIRE_GPU=1)"
      LIFEGEN_REQUIRE_GPU=1 timeout ${TEST_LIMIT:-200} $G/test-$t --test-threads 4 ${TEST_FILTER:-} 2>&1 | grep -vE '^test .* ok$' | tail -12
    done
    step "compute-sanitizer memcheck (planes with an interior and edges; a remainder pass)"
    for rule in B3/S23 /2/3 B2-a/S12 B3/S23/3; do
      for size in 4133x300 9000x170; do
        compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule "$rule:P${size/x/,}" --size $size --gens 25 2>&1 | tail -1
      done
    done
    step "scripts/golly/compare.py --topology P --backends gpu"
    python3 scripts/golly/compare.py --topology P --backends gpu --bgolly $G/bgolly --lifegen $G/lifegen \
      --rules "B3/S23;/2/3;B36/S23;B2-a/S12;B3/S23/3;$LTL" --sizes 4133x97,6000x130 \
      --gens 10,23 --seeds 1 --quiet 2>&1 | tail -8 ;;
  ncu)
    NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    M=smsp__inst_executed.sum,gpu__time_duration.sum,smsp__warp_issue_stalled_no_instruction_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,launch__registers_per_thread,launch__grid_size
    for bin in lifegen-old lifegen; do
      for t in T P; do
        # One pass: the torus kernel, or the plane's kernels (old: one; new: the edges' and the interior's).
        n=1; [ $bin = lifegen ] && [ $t = P ] && n=5
        step "ncu $bin B3/S23:${t}65536,65536, the first $n stream kernel launches"
        $NCU -k regex:lifegen_stream -c $n --metrics $M $G/$bin bench --backend gpu \
          --rule B3/S23:${t}65536,65536 --size 65536x65536 --gens 10 --runs 1 2>&1 \
          | grep -E 'lifegen_stream|smsp__|gpu__time|l1tex|launch__|backend|ERR' | sed 's/  */ /g'
      done
    done ;;
  rates)
    for rule in B3/S23 /2/3 $LTL; do
      step "$rule: torus, plane, plane before (65536^2 x 1024)"
      bench $G/lifegen "$rule:T65536,65536"
      bench $G/lifegen "$rule:P65536,65536"
      [ "$rule" != $LTL ] && [ -x $G/lifegen-old ] && bench $G/lifegen-old "$rule:P65536,65536"
    done ;;
  variants)
    # Where a plane's edge kernels start beside the interior's, and their segments.
    for rule in B3/S23 /2/3; do
      for v in "LIFEGEN_GPU_PLANE_EDGES=first LIFEGEN_GPU_PLANE_EDGE_ROWS=512" \
               "LIFEGEN_GPU_PLANE_EDGES=first LIFEGEN_GPU_PLANE_EDGE_ROWS=128" \
               "LIFEGEN_GPU_PLANE_EDGES=last LIFEGEN_GPU_PLANE_EDGE_ROWS=64" \
               "LIFEGEN_GPU_PLANE_EDGES=last LIFEGEN_GPU_PLANE_EDGE_ROWS=256"; do
        step "$rule plane, $v"; (export $v; bench $G/lifegen "$rule:P65536,65536")
      done
    done ;;
  edges)
    # The masked kernel's words a lane (the edge columns are a word wide) and its segments.
    for rule in B3/S23 /2/3; do
      step "$rule torus (same-call baseline)"; bench $G/lifegen "$rule:T65536,65536"
      for v in "LIFEGEN_GPU_PLANE_EDGE_WORDS=1" "LIFEGEN_GPU_PLANE_EDGE_WORDS=2" \
               "LIFEGEN_GPU_PLANE_EDGE_WORDS=1 LIFEGEN_GPU_PLANE_EDGE_ROWS=256" \
               "LIFEGEN_GPU_PLANE_EDGE_WORDS=1 LIFEGEN_GPU_PLANE_EDGE_ROWS=1024" \
               "LIFEGEN_GPU_PLANE_EDGE_WORDS=1 LIFEGEN_GPU_PLANE_EDGES=last LIFEGEN_GPU_PLANE_EDGE_ROWS=256"; do
        step "$rule plane, $v"; (export $v; bench $G/lifegen "$rule:P65536,65536")
      done
    done ;;
  grid)
    # Where the time of a plane goes beyond its work: the interior's segment (the model's, or
    # the torus's) against when the edges start and their segments; the torus first and last.
    for rule in B3/S23 /2/3; do
      step "$rule torus (same-call baseline)"; bench $G/lifegen "$rule:T65536,65536"
      for seg in auto 529; do
        for v in "LIFEGEN_GPU_PLANE_EDGES=first LIFEGEN_GPU_PLANE_EDGE_ROWS=512" \
                 "LIFEGEN_GPU_PLANE_EDGES=first LIFEGEN_GPU_PLANE_EDGE_ROWS=128" \
                 "LIFEGEN_GPU_PLANE_EDGES=last LIFEGEN_GPU_PLANE_EDGE_ROWS=256" \
                 "LIFEGEN_GPU_PLANE_EDGES=last LIFEGEN_GPU_PLANE_EDGE_ROWS=64"; do
          [ $seg != auto ] && v="$v LIFEGEN_GPU_STREAM_SEGMENT_ROWS=$seg"
          step "$rule plane, $v"; (export $v; bench $G/lifegen "$rule:P65536,65536")
        done
      done
      step "$rule torus (again)"; bench $G/lifegen "$rule:T65536,65536"
    done ;;
  esac
}
for part in ${PARTS:-tests ncu rates}; do
  run_part $part 2>&1 | tee "${OUT:-.}/gpu-plane-$part.log"
done
