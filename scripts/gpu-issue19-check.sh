#!/usr/bin/env bash
# Issue 19's GPU checks and figures: the GPU tests (rules given by their 3x3 table among them),
# compute-sanitizer on map-rule kernels, and the rates of the rules beside B3/S23 in the
# same call. Expects release binaries in .gpu/ (scripts/gpu-build.sh). Writes
# ${OUT:-.}/gpu-issue19-<part>.log. Usage: PARTS="suite tests rates ltl ltl-shapes ltl-lines ltl-masks pair plans gens defaults knobs fit" scripts/gpu-issue19-check.sh
set -u
G=${G:-.gpu}
step() { echo; echo "=== $* ($(date +%T))"; }
bench() { local rule=$1 size=$2 gens=$3; shift 3
  $G/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $gens --runs ${RUNS:-3} "$@" 2>&1 | grep -E 'backend|cell updates/s: |error'; }
MAPRULE=MAPeQv8IB8hdY88yTdTxBYqnaHqkpIBAF6PdB8uQ2+bvJf2Mbm+ZMCylH4zBTuJoqTDdcYDkzqXqLjH7v8f9uKGgw
# Each of the rules in $1 under each of the plans in $2, B3/S23 at the default plan first and last.
plan_grid() {
  step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
  step "B3/S23 65536^2 x 1024 k2-t10-funnel"; bench B3/S23 65536 1024
  for rule in $1; do
    for plan in $2; do step "${rule:0:40} 65536^2 x 1024 $plan"; bench "$rule" 65536 1024 --plan $plan; done
  done
  step "B3/S23 65536^2 x 1024 k2-t10-funnel"; bench B3/S23 65536 1024
}
RULES=${RULES:-"B3/S23 B2-a/S12 B3/S2-i34q B2ce3aeiknrjy/S23-a B3/S23-a B2/S34H B13/S012V $MAPRULE"}
for part in ${PARTS:-tests rates}; do
  exec > >(tee "${OUT:-.}/gpu-issue19-$part.log") 2>&1
  case $part in
  tests)
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    for t in gpu gpu_ltl; do
      step "tests/$t (LIFEGEN_REQUIRE_GPU=1)"
      LIFEGEN_REQUIRE_GPU=1 $G/test-$t --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -12
    done
    step "compute-sanitizer memcheck"
    for rule in B2-a/S12 B2/S34H B13/S012V R16,C0,M1,S20..40,B20..30,N+ R16,C0,M1,S300..500,B300..450,N2; do
      compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule $rule --size 1056x300 --gens 5 2>&1 | tail -1
    done ;;
  ltl)
    for rule in R8,C0,M0,S40..60,B40..50,NM R8,C0,M0,S10..20,B10..16,N+ R8,C0,M0,S80..120,B80..110,N2 \
                R16,C0,M0,S170..296,B170..300,NM R16,C0,M0,S20..40,B20..30,N+ R16,C0,M0,S300..500,B300..450,N2; do
      step "$rule 60416^2 x 100"; bench "$rule" 60416 100
    done ;;
  ltl-shapes)
    # Every LtL shape after the merge of the two shape branches: the GPU LtL tests (every shape
    # at radii 1-16, decay on every shape, any width), then the rates at r = 16 beside NM (issue
    # 19: each within 2x of NM's).
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    step "tests/gpu_ltl (LIFEGEN_REQUIRE_GPU=1)"
    LIFEGEN_REQUIRE_GPU=1 timeout ${TEST_LIMIT:-150} $G/test-gpu_ltl --test-threads 2 2>&1 | grep -vE '^test .* ok$' | tail -12
    for n in M X '*' '#' H B D A 3 G "@$(printf 'A5%.0s' $(seq 136))" "W$(printf '12345678F%.0s' $(seq 121))"; do
      rule="R16,C0,M0,S20..40,B20..30,N$n"; step "${rule:0:40} 60416^2 x 100"; bench "$rule" 60416 100
    done ;;
  ltl-masks)
    # N@ and NW masks whose rows repeat, counted by columns carried from a period of rows up:
    # their GPU test (every radius 1 to 16, two states and decay), memcheck on the new kernels,
    # then the benchmark masks' rates at r = 16 beside NM's in the same call (issue 19: within
    # 2x of NM's). Each step under a limit, so that the call fits a device budget of 300 s.
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    step "tests/gpu_ltl periodic_masks (LIFEGEN_REQUIRE_GPU=1)"
    LIFEGEN_REQUIRE_GPU=1 timeout ${TEST_LIMIT:-80} $G/test-gpu_ltl periodic_masks 2>&1 | grep -vE '^test .* ok$' | tail -12
    a5="@$(printf 'A5%.0s' $(seq 136))"; w="W$(printf '12345678F%.0s' $(seq 121))"
    step "compute-sanitizer memcheck"
    for rule in "R16,C0,M0,S20..40,B20..30,N$a5" "R16,C0,M1,S20..40,B20..30,N$w" \
                "R8,C3,M0,S50..90,B60..80,N@$(printf 'A5%.0s' $(seq 36))"; do
      echo "${rule:0:40}"; timeout 60 compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule "$rule" --size 1056x300 --gens 5 2>&1 | tail -1
    done
    for n in M "$a5" "$w"; do
      rule="R16,C0,M0,S20..40,B20..30,N$n"; step "${rule:0:40} 60416^2 x 100"; bench "$rule" 60416 100
    done
    for n in M "$a5" "$w"; do
      rule="R16,C3,M0,S20..40,B20..30,N$n"; step "${rule:0:40} 60416^2 x 100"; bench "$rule" 60416 100
    done ;;
  suite)
    # Every GPU test binary after a merge (LIFEGEN_REQUIRE_GPU=1), each under a limit.
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    for t in plane gpu gpu_bands generations map_rules backends gpu_ltl; do
      step "tests/$t (LIFEGEN_REQUIRE_GPU=1)"
      LIFEGEN_REQUIRE_GPU=1 timeout ${TEST_LIMIT:-150} $G/test-$t --test-threads 8 2>&1 | grep -vE '^test .* ok$' | tail -8
      echo "exit: ${PIPESTATUS[0]}"
    done ;;
  ltl-lines)
    # The shapes of lines (N+ N* N# NA N3) and the Gaussian by triangles: their GPU test (every
    # radius 1-16, two states and decay), decay on every shape, then the rates at r = 16 beside
    # NM's (issue 19: each within 2x of NM's), decay among them.
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    for t in lines_and_triangles decay_on_every_shape; do
      step "tests/gpu_ltl $t (LIFEGEN_REQUIRE_GPU=1)"
      LIFEGEN_REQUIRE_GPU=1 timeout ${TEST_LIMIT:-150} $G/test-gpu_ltl $t 2>&1 | grep -vE '^test .* ok$' | tail -12
    done
    for n in M + X '*' '#' A 3 G; do
      rule="R16,C0,M0,S20..40,B20..30,N$n"; step "$rule 60416^2 x 100"; bench "$rule" 60416 100
    done
    for n in M '*' G; do
      rule="R16,C3,M0,S20..40,B20..30,N$n"; step "$rule 60416^2 x 100"; bench "$rule" 60416 100
    done ;;
  pair)
    # The pair shape searched jointly and read from kernels_out/pairs/: the GPU tests (table
    # rules among them), memcheck on pair-shape kernels, and the goal rules' rates beside
    # B3/S23 in the same call.
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    step "tests/gpu (LIFEGEN_REQUIRE_GPU=1)"
    LIFEGEN_REQUIRE_GPU=1 $G/test-gpu --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -12
    step "compute-sanitizer memcheck"
    for rule in B2-a/S12 B3/S23-a B3/S2-i34q; do
      compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule $rule --size 1056x300 --gens 5 2>&1 | tail -1
    done
    for rule in B3/S23 B2-a/S12 B3/S2-i34q B2ce3aeiknrjy/S23-a B3/S23-a B2ce3-cq/S23-a B3/S23; do
      step "$rule 65536^2 x 1024"; bench "$rule" 65536 1024
    done ;;
  plans)
    # The goal rules' kernels under every layout and shift form (issue 19: is the table
    # kernels' plan the one that suits them, or does a larger kernel want another?), B3/S23 at
    # the default plan first and last.
    plan_grid "B3/S2-i34q B2-a/S12 B2ce3aeiknrjy/S23-a" \
      "${PLANS:-k2-t10-funnel k2-t10-multiply k1-t10-funnel k1-t10-multiply k4-t10-funnel k4-t10-multiply k2-t16-funnel k2-t16-multiply}" ;;
  gens)
    # Generations a launch and words a lane for the pair-shape kernels (B3/S2-i34q spills at
    # k2-t10 and not at t9), B3/S23 at the default plan first.
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    step "B3/S23 65536^2 x 1024 k2-t10-funnel"; bench B3/S23 65536 1024
    for plan in k2-t10-funnel k2-t9-funnel k2-t8-funnel k2-t6-funnel k1-t10-funnel k1-t16-funnel; do
      step "B3/S2-i34q 65536^2 x 1024 $plan"; bench B3/S2-i34q 65536 1024 --plan $plan
    done
    for plan in k2-t9-funnel k2-t8-funnel k1-t10-funnel; do
      step "B2-a/S12 65536^2 x 1024 $plan"; bench B2-a/S12 65536 1024 --plan $plan
    done ;;
  rates)
    for rule in $RULES; do step "$rule 65536^2 x 1024"; bench "$rule" 65536 1024; done ;;
  shapes)
    step "tests/gpu (LIFEGEN_REQUIRE_GPU=1)"
    LIFEGEN_REQUIRE_GPU=1 $G/test-gpu --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -4
    step "tests/gpu_ltl radii_1_to_16_every_shape_on_the_gpu any_width (LIFEGEN_REQUIRE_GPU=1)"
    LIFEGEN_REQUIRE_GPU=1 $G/test-gpu_ltl radii_1_to_16 2>&1 | tail -2
    LIFEGEN_REQUIRE_GPU=1 $G/test-gpu_ltl any_width 2>&1 | tail -2
    step "compute-sanitizer memcheck"
    for rule in 345/2/4 R3,C0,M0,S8..20,B9..14,NH R2,C0,M1,S3..7,B3..5,NB; do
      compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule $rule --size 1001x300 --gens 5 2>&1 | tail -1
    done
    for n in M X '*' '#' H B A 3; do
      rule="R16,C0,M0,S20..40,B20..30,N$n"; step "$rule 60416^2 x 100"; bench "$rule" 60416 100
    done
    for rule in B3/S23 /2/3 345/2/4; do step "$rule 65536^2 x 1024"; bench "$rule" 65536 1024; done ;;
  generations)
    step "tests/gpu generations (LIFEGEN_REQUIRE_GPU=1)"
    LIFEGEN_REQUIRE_GPU=1 $G/test-gpu generations 2>&1 | tail -3
    step "compute-sanitizer memcheck"
    for rule in /2/3 345/2/4 12/34/256 R5,C4,M1,S34..58,B34..45,NM; do
      compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule $rule --size 1056x300 --gens 5 2>&1 | tail -1
    done
    for rule in B3/S23 /2/3 345/2/4 B3/S23/3 B2-a/S12/4 12/34/256; do step "$rule 65536^2 x 1024"; bench "$rule" 65536 1024; done
    for rule in R16,C0,M0,S170..296,B170..300,NM R16,C3,M0,S170..296,B170..300,NM R16,C10,M0,S170..296,B170..300,NM; do
      step "$rule 60416^2 x 100"; bench "$rule" 60416 100
    done ;;
  defaults)
    # Which generations a launch suit each family's kernels (issue 19: is k2-t10, chosen for
    # Life, the right default for the larger table and Generations kernels?): each rule at t10,
    # t9 and t8 with its registers and spills (`describe`), B3/S23 first and last.
    plan_grid "B3/S23 B3/S23-a B2-a/S12 B3/S2-i34q B2ce3aeiknrjy/S23-a B2/S34H B13/S012V B2-a/S12/4 /2/3 345/2/4 B3/S23/3 $MAPRULE" \
      "k2-t10-funnel k2-t9-funnel k2-t8-funnel" ;;
  fit)
    # The default plan fitted to registers (two generations fewer while a kernel spills more
    # than 64 bytes a thread): the GPU tests its change touches, memcheck on a fitted kernel,
    # then each family's rate under the default beside B3/S23, and the fitted rules at the
    # plans next to the one chosen.
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    step "tests/gpu (LIFEGEN_REQUIRE_GPU=1)"
    LIFEGEN_REQUIRE_GPU=1 timeout ${TEST_LIMIT:-150} $G/test-gpu --test-threads 4 2>&1 | grep -vE '^test .* ok$' | tail -8
    for t in "plane gpu_chained_kernels_match_the_reference" "topologies gpu_topologies_match_the_reference"; do
      set -- $t; step "tests/$1 $2 (LIFEGEN_REQUIRE_GPU=1)"
      LIFEGEN_REQUIRE_GPU=1 timeout ${TEST_LIMIT:-150} $G/test-$1 $2 2>&1 | grep -vE '^test .* ok$' | tail -4
    done
    step "compute-sanitizer memcheck"
    for rule in B2-a/S12/4 345/2/4:P1001,300; do
      compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule $rule --size 1001x300 --gens 25 2>&1 | tail -1
    done
    for rule in B3/S23 B3/S23-a B2-a/S12 B3/S2-i34q B2ce3aeiknrjy/S23-a B2/S34H B13/S012V \
                B2-a/S12/4 /2/3 345/2/4 B3/S23/3 345/2/4:P65536,65536 B3/S23; do
      step "$rule 65536^2 x 1024 (default plan)"; bench "$rule" 65536 1024
    done
    for plan in k2-t7-funnel k2-t6-funnel; do
      step "B2-a/S12/4 65536^2 x 1024 $plan"; bench B2-a/S12/4 65536 1024 --plan $plan
    done
    for plan in k2-t7-funnel k1-t8-funnel k1-t6-funnel; do
      step "B3/S2-i34q 65536^2 x 1024 $plan"; bench B3/S2-i34q 65536 1024 --plan $plan
    done ;;
  knobs)
    # The layout knobs the environment already has, on the two goals missed by a few per cent:
    # B3/S2-i34q at k2-t8 (segment rows, warps a block) and R16 NG (words a lane, how older
    # rows' counts are kept, warps a block), each beside its default in the same call.
    step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    i34q() { step "B3/S2-i34q k2-t8 $*"; env "$@" $G/lifegen bench --backend gpu --rule B3/S2-i34q \
      --size 65536x65536 --gens 1024 --runs ${RUNS:-3} --plan k2-t8-funnel 2>&1 | grep -E 'backend|cell updates/s: |error'; }
    i34q LIFEGEN_NONE=1
    for v in 512 1024 2048 4096; do i34q LIFEGEN_GPU_STREAM_SEGMENT_ROWS=$v; done
    for v in 1 2 4 8; do i34q LIFEGEN_GPU_STREAM_BLOCK_WARPS=$v; done
    ng() { step "R16 $1 $2"; env "$2" $G/lifegen bench --backend gpu --rule "R16,C0,M0,S20..40,B20..30,N$1" \
      --size 60416x60416 --gens 100 --runs ${RUNS:-3} 2>&1 | grep -E 'backend|cell updates/s: |error'; }
    ng M LIFEGEN_NONE=1; ng G LIFEGEN_NONE=1
    for v in 1 4; do ng G LIFEGEN_GPU_LTL_WORDS=$v; done
    for v in delay recompute paired; do ng G LIFEGEN_GPU_LTL_HISTORY=$v; done
    for v in 1 2 4 8; do ng G LIFEGEN_GPU_STREAM_BLOCK_WARPS=$v; done
    for v in 256 512 1024 2048; do ng G LIFEGEN_GPU_STREAM_SEGMENT_ROWS=$v; done
    ng M LIFEGEN_NONE=1 ;;
  esac
done
