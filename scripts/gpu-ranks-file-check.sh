#!/bin/bash
# Issue 31's universe-file item on one host of N GPUs (run on the device, from the repository
# root, with the release binary in G): a soup of SIZE^2 written to a universe file, GENS
# generations from it on one GPU out of core (--gpu-memory, as the out-of-core benchmark runs
# it), the same as N ranks under torchrun (the README's launch line), and the two output files
# compared byte for byte. The disk's rates beside them (dd).
#   G=.gpu/sNN SIZE=393216 GENS=4096 bash scripts/gpu-ranks-file-check.sh
set -u
G=${G:-.gpu}
N=${N:-$(nvidia-smi -L | wc -l)}
SIZE=${SIZE:-393216}
GENS=${GENS:-4096}
BUDGET=${BUDGET:-4GiB}
export LIFEGEN_NCCL=${LIFEGEN_NCCL:-/usr/lib/x86_64-linux-gnu/libnccl.so.2} NCCL_NVLS_ENABLE=0
D=${SCRATCH:-$(for d in "$PWD" /tmp /var/tmp; do echo "$(df --output=avail "$d" | tail -1 | tr -d ' ') $d"; done | sort -n | tail -1 | cut -d' ' -f2)/ranks-file-scratch}
mkdir -p "$D"
step() { echo; echo "=== $* ($(date +%T))"; }
step device
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
df -h "$D"; free -g | head -2; nproc
step "disk: write and read 8 GiB (fsync, O_DIRECT)"
dd if=/dev/zero of="$D/dd.bin" bs=64M count=128 conv=fsync 2>&1 | tail -1
dd if="$D/dd.bin" of=/dev/null bs=64M iflag=direct 2>&1 | tail -1
rm -f "$D/dd.bin"
step "soup ${SIZE}^2 to a universe file"
$G/lifegen run --size "$SIZE" --gens 0 --output "$D/soup.npy" | grep -E 'generations|population|error'
ls -l "$D/soup.npy"
step "one GPU, out of core under --gpu-memory $BUDGET: ${SIZE}^2 x $GENS from the soup file"
/usr/bin/time -f "wall %e s, peak %M KB" $G/lifegen run --input "$D/soup.npy" --gens "$GENS" \
  --backend gpu --gpus 1 --gpu-memory "$BUDGET" --output "$D/one.npy" 2>&1 \
  | grep -vE '^\s*$' | tail -12
free -g | head -2
step "$N ranks (torchrun): the same run from the soup file"
/usr/bin/time -f "wall %e s (the launch)" torchrun --standalone --nproc-per-node "$N" --no-python \
  $G/lifegen run --input "$D/soup.npy" --gens "$GENS" --backend gpu --output "$D/ranks.npy" 2>&1 \
  | grep -vE '^\s*$' | tail -14
step compare
ls -l "$D"
if cmp -s "$D/one.npy" "$D/ranks.npy"; then echo "IDENTICAL: $N ranks = one GPU out of core"; else echo "DIFFERENT"; fi
rm -rf "$D"
