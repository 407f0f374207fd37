#!/usr/bin/env bash
# After merging branches: the GPU tests each branch touched, run together on one binary set, and
# the rates each branch reported, in one call. Expects release binaries in $G (scripts/gpu-build.sh).
# Writes ${OUT:-.}/gpu-merge-check.log.
set -u
G=$(realpath ${G:-.gpu})
exec > >(tee "${OUT:-.}/gpu-merge-check.log") 2>&1
step() { echo; echo "=== $* ($(date +%T))"; }
bench() { local rule=$1 size=$2 gens=$3
  $G/lifegen bench --backend gpu --rule "$rule" --size ${size}x${size} --gens $gens --runs ${RUNS:-3} 2>&1 | grep -E 'cell updates/s: |error'; }
step device; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
$G/lifegen --version 2>&1 | head -1
grep -m1 -o 'avx512[a-z]*' /proc/cpuinfo | head -1 | sed 's/^/host CPU has /'
for t in "plane gpu_chained_kernels_match_the_reference" "plane interpreter_and_native_code_on_every_isa" \
         "gpu map_rules_match" "gpu generations_rules_match" "gpu any_width_and_height_matches" \
         "gpu the_default_plan_fits_spilling_kernels" \
         "gpu_ltl periodic_masks_on_the_gpu" "topologies gpu_topologies_match_the_reference" "gpu_bands"; do
  set -- $t
  step "tests/$t (LIFEGEN_REQUIRE_GPU=1)"
  LIFEGEN_REQUIRE_GPU=1 timeout ${TEST_LIMIT:-200} $G/test-$1 ${2:-} --test-threads 16 2>&1 | grep -vE '^test .* ok$' | tail -6
  echo "exit: ${PIPESTATUS[0]}"
done
step "compute-sanitizer memcheck"
for rule in "B3/S23:P1001,300" "/2/3:P1001,300" "B3/S23:K1001*,300" "B3/S23:S300" "B3/S23:T1001+7,300" \
            "/2/3:T1001,300-5" "B3/S2-i34q" "B2-a/S12/4" "R16,C0,M1,S20..40,B20..30,NG"; do
  size=1001x300; [[ $rule == *:S300 ]] && size=300x300
  echo "$rule"; compute-sanitizer --tool memcheck $G/lifegen run --backend gpu --rule "$rule" --size $size --gens 25 2>&1 | tail -1
done
if [ -x $G/bgolly ]; then
  step "scripts/golly/compare.py --backends gpu (shifted tori)"
  for t in T+ T,+; do
    python3 scripts/golly/compare.py --topology "$t" --backends gpu --bgolly $G/bgolly --lifegen $G/lifegen \
      --rules 'B3/S23;/2/3;B2-a/S12' --sizes 4133x97 --gens 23 --seeds 1 --quiet 2>&1 | tail -1
  done
fi
for rule in B3/S23:T65536,65536 B3/S23:P65536,65536 /2/3:T65536,65536 /2/3:P65536,65536 B3/S23:K65536*,65536 \
            B3/S23:T65536+1,65536 B3/S23:T65536,65536-3 B2-a/S12 B3/S2-i34q 345/2/4 B2-a/S12/4; do
  step "$rule 65536^2 x 1024"; bench "$rule" 65536 1024
done
for n in M G "@$(printf 'A5%.0s' $(seq 136))" "W$(printf '12345678F%.0s' $(seq 121))"; do
  rule="R16,C0,M0,S20..40,B20..30,N$n"; step "${rule:0:40} 60416^2 x 100"; bench "$rule" 60416 100
done
