#!/usr/bin/env bash
# The ltl-lines part of gpu-issue19-check.sh, then an experiment: lifegen-d4 and test-gpu_ltl-d4
# are the same commit built with gen/src/emit/ptx_stream.rs's MAX_GLOBAL_LOAD_DEPTHS = 4 (3 is
# kept), run against the reference and timed beside lifegen on kernels that read four load
# depths (NG's triangles, R3 NN). Binaries in .gpu/ltl-speed (scripts/gpu-build.sh's way).
# Logs: $OUT/gpu-issue19-ltl-lines.log and $OUT/gpu-ltl-depths.log (BENCHMARKS.md, 4536dcf).
G=.gpu/ltl-speed
OUT=${OUT:-.}
G=$G OUT=$OUT PARTS=ltl-lines TEST_LIMIT=120 bash $G/gpu-issue19-check.sh >/dev/null 2>&1
exec > >(tee "$OUT/gpu-ltl-depths.log") 2>&1
step() { echo; echo "=== $* ($(date +%T))"; }
step "tests/gpu_ltl lines_and_triangles with 4 global load depths (LIFEGEN_REQUIRE_GPU=1)"
LIFEGEN_REQUIRE_GPU=1 timeout 120 $G/test-gpu_ltl-d4 lines_and_triangles 2>&1 | grep -vE '^test .* ok$' | tail -6
for case in R3,C0,M0,S6..12,B7..10,NN:1001x300 R3,C0,M1,S90..130,B95..115,NG:1001x300 R16,C4,M1,S20000..40000,B24000..30000,NG:517x100; do
  rule=${case%:*}; size=${case#*:}
  step "$rule: gpu with 4 global load depths against the reference, $size x 5"
  $G/lifegen-d4 run --backend gpu --rule $rule --size $size --gens 5 --seed 3 --density 0.4 --output /tmp/g.rle 2>&1 | tail -1
  $G/lifegen run --backend reference --rule $rule --size $size --gens 5 --seed 3 --density 0.4 --output /tmp/r.rle 2>&1 | tail -1
  cmp /tmp/g.rle /tmp/r.rle && echo IDENTICAL
done
for rule in R16,C0,M0,S20..40,B20..30,NG R16,C3,M0,S20..40,B20..30,NG R3,C0,M0,S6..12,B7..10,NN; do
  for bin in lifegen lifegen-d4; do
    step "$bin $rule 60416^2 x 100"
    $G/$bin bench --backend gpu --rule "$rule" --size 60416x60416 --gens 100 --runs 3 2>&1 | grep -E 'backend|cell updates/s: |error'
  done
done
