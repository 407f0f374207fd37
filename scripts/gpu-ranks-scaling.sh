#!/bin/bash
# Issue 31's scaling on one host of N GPUs (run on the device, from the repository root, with
# the release binary in G): B3/S23 131072^2 x 8000 on one GPU, on N GPUs in one process, and as
# N ranks under torchrun (the README's launch line), stepping time as each run prints it.
#   G=.gpu/sNN N=4 bash scripts/gpu-ranks-scaling.sh        (carry G; kind nvidia-h200-x4)
set -u
G=${G:-.gpu}
N=${N:-$(nvidia-smi -L | wc -l)}
export LIFEGEN_NCCL=${LIFEGEN_NCCL:-/usr/lib/x86_64-linux-gnu/libnccl.so.2} NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name --format=csv,noheader
run() { timeout 90 "$@" 2>&1 | grep -E "generations:|cell updates" | head -2 | tr '\n' ' '; echo; }
for round in 1 2; do
  echo "round $round one GPU: $(run $G/lifegen run --size 131072x131072 --gens 8000 --backend gpu --gpus 1)"
  echo "round $round $N GPUs, one process: $(run $G/lifegen run --size 131072x131072 --gens 8000 --backend gpu --gpus $N)"
  echo "round $round $N ranks: $(run torchrun --standalone --nproc-per-node $N --no-python $G/lifegen run --size 131072x131072 --gens 8000 --backend gpu)"
done
