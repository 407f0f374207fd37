#!/bin/bash
# The unbounded plane on the GPU against the CPU's files: the tiles on Life, Generations and
# Larger than Life at 500 generations, a B0 rule (complemented windows) at 501, a tube (:T0,68)
# on the dense box at 501, and a 4096^2 soup at 1000 beside the GPU's dense torus and dense box.
# Lay out a folder holding the patterns (Golly's period-52-glider-gun, banner, bosco,
# waffle-rake, pulsars-in-tube; soup4096.rle from `lifegen run --size 4096 --gens 0 --output`
# with the :T suffix removed), each NAME-cpu.rle made by the same build with --backend cpu, and
# ../lifegen-plane; then on the device: scripts/plane-tiles-gpu-check.sh FOLDER.
cd "${1:-$(dirname "$0")}"
L=../lifegen-plane
nvidia-smi --query-gpu=name --format=csv,noheader
same() { cmp -s "$1" "$2" && echo "$3: identical" || echo "$3: DIFFERENT"; }
for f in period-52-glider-gun banner bosco; do
  $L run --input $f.rle --gens 500 --algo tiles --backend gpu --output $OUT/$f-gpu.rle | grep generations
  same $f-cpu.rle $OUT/$f-gpu.rle $f
done
$L run --input waffle-rake.rle --gens 501 --algo tiles --backend gpu --output $OUT/waffle-gpu.rle | grep generations
same waffle-rake-cpu.rle $OUT/waffle-gpu.rle "waffle-rake (B0)"
$L run --input pulsars-in-tube.rle --gens 501 --backend gpu --output $OUT/tube-gpu.rle | grep -E "backend|generations"
same pulsars-in-tube-cpu.rle $OUT/tube-gpu.rle "pulsars-in-tube"
for i in 1 2; do
  $L run --input soup4096.rle --gens 1000 --algo tiles --backend gpu --output $OUT/soup-gpu.rle | grep generations
  $L run --size 4096 --gens 1000 --backend gpu | grep -E "generations|cell updates"
  $L run --input soup4096.rle --gens 1000 --algo dense --backend gpu | grep generations
done
same soup-cpu.rle $OUT/soup-gpu.rle soup
