#!/bin/bash
# Tiles held on the GPU against the CPU's: the GPU test, the 4096^2 soup to 1000 (tiles of 128
# and 512) against the CPU's file and beside the GPU's dense torus and dense box, a 16384^2 soup
# beside its dense torus, and four of Golly's patterns to 2000 against the CPU's tiles.
# Lay out a folder holding ../lifegen-plane's build as lifegen, the test binary of
# tests/unbounded_plane.rs as test-unbounded_plane (scripts/gpu-build.sh with
# TESTS=unbounded_plane), soup.rle (`lifegen run --size 4096 --gens 0 --output` with its :T
# suffix removed), soup-cpu.rle (the same build's `--gens 1000 --algo tiles --backend cpu`), and
# period-52-glider-gun.rle, acorn.lif, banner.rle, breeder.lif from Golly's Patterns each with
# its NAME-cpu.rle (`--gens 2000 --algo tiles --backend cpu`); then on the device:
# scripts/plane-tiles-gpu-check.sh FOLDER.
cd "${1:-$(dirname "$0")}"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
export LIFEGEN_REQUIRE_GPU=1
timeout 100 ./test-unbounded_plane tiles_held_on_the_gpu 2>&1 | grep -E "test |panicked|result" | tee $OUT/test.log
for i in 1 2 3; do
  for t in 128 512; do
    echo "tile $t"; timeout 30 ./lifegen run --input soup.rle --gens 1000 --algo tiles --backend gpu --tile $t --output $OUT/soup-gpu-$t.rle | grep -E "^backend|generations|tiles hold"
  done
  timeout 30 ./lifegen run --size 4096 --gens 1000 --backend gpu | grep -E "generations|cell updates"
  timeout 30 ./lifegen run --input soup.rle --gens 1000 --algo dense --backend gpu | grep -E "generations"
done 2>&1 | tee $OUT/soup.log
for t in 128 512; do cmp soup-cpu.rle $OUT/soup-gpu-$t.rle && echo "soup tile $t: identical to the CPU's"; done | tee -a $OUT/soup.log
timeout 60 ./lifegen run --size 16384 --gens 0 --output big-t.rle > /dev/null && sed 's/:T16384,16384//' big-t.rle > big.rle
for i in 1 2; do
  for t in 128 512; do echo "tile $t"; timeout 60 ./lifegen run --input big.rle --gens 1000 --algo tiles --backend gpu --tile $t | grep -E "generations|tiles hold"; done
  timeout 60 ./lifegen run --input big-t.rle --gens 1000 --backend gpu | grep -E "generations|cell updates"
done 2>&1 | tee $OUT/big.log
for f in period-52-glider-gun.rle acorn.lif banner.rle breeder.lif; do
  for b in gpu cpu; do timeout 60 ./lifegen run --input $f --gens 2000 --algo tiles --backend $b --output $OUT/$f-$b.rle | grep -E "generations" | sed "s/^/$f $b: /"; done
  cmp $f-cpu.rle $OUT/$f-gpu.rle && echo "$f: GPU identical to the CPU's"
done 2>&1 | tee $OUT/golly.log
