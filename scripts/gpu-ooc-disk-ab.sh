#!/bin/bash
# Issue 30's out-of-core row against the disk (run on the device, from the repository root): the
# disk's own rates (dd), a soup of SIZE^2 written to a universe file, and GENS generations from
# it on one GPU under --gpu-memory BUDGET by two builds, A and B, alternating ROUNDS times, the
# page cache dropped before each run; the outputs compared byte for byte.
#   A=.gpu/s24/lifegen B=.gpu/s25/lifegen bash scripts/gpu-ooc-disk-ab.sh   (about 4 minutes)
set -u
A=${A:?the first build}
B=${B:?the second build}
SIZE=${SIZE:-393216}
GENS=${GENS:-4096}
BUDGET=${BUDGET:-4GiB}
ROUNDS=${ROUNDS:-2}
D=${SCRATCH:-$(for d in "$PWD" /tmp /var/tmp; do echo "$(df --output=avail "$d" | tail -1 | tr -d ' ') $d"; done | sort -n | tail -1 | cut -d' ' -f2)/ooc-ab-scratch}
mkdir -p "$D"
step() { echo; echo "=== $* ($(date +%T))"; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || echo "(the page cache could not be dropped)"; }
step device
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
df -h "$D" | tail -1; free -g | head -2 | tail -1; nproc
step "disk: write and read 8 GiB (fsync, O_DIRECT)"
dd if=/dev/zero of="$D/dd.bin" bs=64M count=128 conv=fsync 2>&1 | tail -1
dd if="$D/dd.bin" of=/dev/null bs=64M iflag=direct 2>&1 | tail -1
rm -f "$D/dd.bin"
step "soup ${SIZE}^2 to a universe file"
$A run --size "$SIZE" --gens 0 --output "$D/soup.npy" | grep -E 'generations|error'
for round in $(seq "$ROUNDS"); do
  for build in A B; do
    bin=${!build}
    rm -f "$D/$build.npy"
    drop
    step "round $round, build $build ($bin): ${SIZE}^2 x $GENS, --gpu-memory $BUDGET, page cache dropped"
    /usr/bin/time -f "wall %e s, peak %M KB" "$bin" run --input "$D/soup.npy" --gens "$GENS" \
      --backend gpu --gpus 1 --gpu-memory "$BUDGET" --output "$D/$build.npy" 2>&1 \
      | grep -E '^(layout|generations|time|bound|wall|error)'
  done
  if cmp -s "$D/A.npy" "$D/B.npy"; then echo "IDENTICAL: A and B"; else echo "DIFFERENT: A and B"; fi
done
rm -rf "$D"
