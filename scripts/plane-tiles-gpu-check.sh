#!/bin/bash
# The unbounded plane's active tiles on the GPU against the CPU's files, 500 generations.
# Run from a folder holding the three patterns, their *-cpu.rle files and ../lifegen-plane
# (as .gpu/plane/ was laid out for the device: see benchmarks/plane-tiles-gpu-check.log).
cd "${1:-$(dirname "$0")}"
for f in period-52-glider-gun banner bosco; do
  ../lifegen-plane run --input $f.rle --gens 500 --algo tiles --backend gpu --output $OUT/$f-gpu.rle | grep -E "backend|generations|population"
  if cmp -s $f-cpu.rle $OUT/$f-gpu.rle; then echo "$f: GPU tiles identical to the CPU's"; else echo "$f: DIFFERENT"; fi
done
nvidia-smi --query-gpu=name --format=csv,noheader
