#!/usr/bin/env bash
# Bands on one GPU (issue 20 items 1 and 2): the band tests (every exchange route against the CPU),
# cudarc's page-locked trap, compute-sanitizer memcheck and racecheck on the band paths, and the
# exchange's cost (one band against 2 and 4 on one GPU, the new device exchange beside the old one
# through the host, in the same call).
# Expects scripts/gpu-build.sh's binaries in .gpu/ plus .gpu/test-runtime (the runtime's unit
# tests) and .gpu/COMMIT; writes ${OUT:-.}/gpu-bands-check.log. PARTS="tests sanitizer bench".
set -u
parts=${PARTS:-tests sanitizer bench}
log=${OUT:-.}/gpu-bands-check.log
exec > >(tee "$log") 2>&1
L=$PWD/.gpu/lifegen
D=/tmp/bands-scratch; mkdir -p $D
step() { echo; echo "=== $* ($(date +%T))"; }
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
same() { if cmp -s "$1" "$2"; then echo "IDENTICAL $3"; else echo "DIFFERENT $3"; fi; }

step device
echo "binaries of $(cat .gpu/COMMIT 2>/dev/null || echo 'unknown commit')"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
nvidia-smi topo -m 2>/dev/null | head -5

if want tests; then
  step "band tests: every exchange route, 1-4 bands, against the CPU"
  LIFEGEN_REQUIRE_GPU=1 .gpu/test-gpu_bands --test-threads=1 --nocapture 2>&1 | grep -E 'identical|test |panicked|differ|result'
  step "cudarc's page-locked trap (the cause of the attempt's mismatch)"
  .gpu/test-runtime gpu::exchange --ignored --nocapture 2>&1 | grep -E 'test |panicked|result|assert'
  step "CPU band driver tests"
  .gpu/test-runtime drive::bands 2>&1 | grep -E 'test result|FAILED|panicked'
fi

if want sanitizer; then
  step "compute-sanitizer on the band paths"
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  echo "sanitizer: $CS"
  $L run --rule B3/S23 --size 2048x1200 --gens 60 --backend cpu --output $D/cpu.npy | grep population
  $L run --rule R5,C0,M1,S34..58,B34..45,NM --size 1024x600 --gens 20 --backend cpu --output $D/cpu5.npy | grep population
  for tool in memcheck racecheck; do
    for mode in device staged peer; do
      for k in 2 3; do
        LIFEGEN_BAND_EXCHANGE=$mode LIFEGEN_BANDS_PER_GPU=$k $CS --tool $tool --error-exitcode 9 \
          $L run --rule B3/S23 --size 2048x1200 --gens 60 --backend gpu --output $D/gpu.npy 2>&1 | grep -E 'ERROR SUMMARY|backend|error' | cut -c1-200
        same $D/cpu.npy $D/gpu.npy "$tool B3/S23 $mode $k bands"
      done
    done
    LIFEGEN_BANDS_PER_GPU=2 $CS --tool $tool --error-exitcode 9 \
      $L run --rule R5,C0,M1,S34..58,B34..45,NM --size 1024x600 --gens 20 --backend gpu --output $D/gpu5.npy 2>&1 | grep -E 'ERROR SUMMARY|error' | cut -c1-200
    same $D/cpu5.npy $D/gpu5.npy "$tool R5 device 2 bands"
  done
  rm -f $D/*.npy
fi

if want bench; then
  for size in 65536 32768; do
    step "exchange cost: ${size}^2 x 4000, 1, 2 and 4 bands on one GPU (device exchange; host exchange beside)"
    reps="1 2"; [ $size = 65536 ] || reps=1
    for rep in $reps; do
      for k in 1 2 4; do
        echo "-- K=$k device (rep $rep)"
        LIFEGEN_BANDS_PER_GPU=$k $L run --size $size --gens 4000 --backend gpu | grep -E 'backend|generations|cell updates' | cut -c1-230
      done
    done
    for k in 2 4; do
      echo "-- K=$k host (the exchange before)"
      LIFEGEN_BAND_EXCHANGE=host LIFEGEN_BANDS_PER_GPU=$k $L run --size $size --gens 4000 --backend gpu | grep -E 'generations|cell updates'
      echo "-- K=$k staged (page-locked, as between GPUs without peer access)"
      LIFEGEN_BAND_EXCHANGE=staged LIFEGEN_BANDS_PER_GPU=$k $L run --size $size --gens 4000 --backend gpu | grep -E 'generations|cell updates'
    done
  done
fi
rm -rf $D
