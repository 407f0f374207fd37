#!/usr/bin/env bash
# Universe files on a CUDA GPU: runs in bands against runs held whole and against the CPU, kill -9
# and resume, the forced-streaming run (262144^2 with --gpu-memory 2GiB against the same run held
# in GPU memory), and the out-of-core benchmark (393216^2, 4096 generations, from a soup file on
# disk) with the disk's rates measured beside it.
# Expects the release binary in .gpu/ (scripts/gpu-build.sh); writes ${OUT:-.}/gpu-ooc-check.log.
# Parts: PARTS="small multi kill forced big" (default all); multi: several bands on one GPU
# (LIFEGEN_BANDS_PER_GPU), the multi-GPU code path with its halo exchange. SCRATCH picks the directory for the files.
set -u
parts=${PARTS:-small multi kill forced big}
log=${OUT:-.}/gpu-ooc-check.log
exec > >(tee "$log") 2>&1
L=$PWD/.gpu/lifegen
step() { echo; echo "=== $* ($(date +%T))"; }
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# The filesystem with the most room, unless SCRATCH says.
D=${SCRATCH:-$(for d in "$PWD" /tmp /var/tmp; do echo "$(df --output=avail "$d" | tail -1 | tr -d ' ') $d"; done | sort -n | tail -1 | cut -d' ' -f2)/ooc-scratch}
mkdir -p "$D"
same() { if cmp -s "$1" "$2"; then echo "IDENTICAL $3"; else echo "DIFFERENT $3"; fi; }

step device
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv
df -h "$D"; free -g | head -2; nproc; echo "scratch: $D"

if want small; then
  step "small universes: GPU in bands = GPU whole = CPU whole"
  while read -r rule size gens budget; do
    $L run --rule "$rule" --size "$size" --gens "$gens" --backend cpu --output "$D/cpu.npy" | grep -E 'layout|population|error'
    $L run --rule "$rule" --size "$size" --gens "$gens" --backend gpu --output "$D/gpu.npy" | grep -E 'backend|layout|population|error'
    $L run --rule "$rule" --size "$size" --gens "$gens" --backend gpu --output "$D/band.npy" --gpu-memory "$budget" | grep -E 'layout|population|time|error'
    same "$D/cpu.npy" "$D/gpu.npy" "$rule $size x $gens: gpu whole vs cpu"
    same "$D/cpu.npy" "$D/band.npy" "$rule $size x $gens: gpu bands ($budget) vs cpu"
  done <<'EOF'
B3/S23 4096x3000 300 514MiB
B3/S23 4000x2000 200 513MiB
B36/S23 8192x4100 97 516MiB
R5,C0,M1,S34..58,B34..45,NM 2048x1500 41 512.5MiB
R16,C0,M1,S170..296,B170..300,NN 1024x1200 7 512.25MiB
EOF
  rm -f "$D"/*.npy
fi

if want multi; then
  step "several bands on one GPU (the multi-GPU path): held whole and out of core = one band"
  while read -r rule size gens; do
    $L run --rule "$rule" --size "$size" --gens "$gens" --backend gpu --output "$D/one.npy" | grep -E 'population|error'
    for k in 2 3; do
      LIFEGEN_BANDS_PER_GPU=$k $L run --rule "$rule" --size "$size" --gens "$gens" --backend gpu --output "$D/k.npy" | grep -E 'backend|population|error'
      same "$D/one.npy" "$D/k.npy" "$rule $size x $gens: $k bands on one GPU vs one"
      LIFEGEN_BANDS_PER_GPU=$k $L run --rule "$rule" --size "$size" --gens "$gens" --backend gpu --gpu-memory 514MiB --output "$D/k.npy" | grep -E 'layout|population|error'
      same "$D/one.npy" "$D/k.npy" "$rule $size x $gens: $k workers on one GPU, out of core, vs one"
    done
  done <<'EOF'
B3/S23 4096x3000 300
R5,C0,M1,S34..58,B34..45,NM 2048x1500 41
EOF
  rm -f "$D"/*.npy
  for size in 32768 65536; do
    step "the cost of the exchange: ${size}^2 x 4000, one band against 2 and 4 bands on one GPU"
    for k in 1 2 4; do
      LIFEGEN_BANDS_PER_GPU=$k $L run --size $size --gens 4000 --backend gpu | grep -E 'backend|generations|cell updates'
    done
  done
fi

if want kill; then
  step "kill -9 at random moments, then the same command: GPU, in bands"
  args=(run --rule B3/S23 --size 8192x8192 --gens 12000 --backend gpu --gpu-memory 520MiB --gens-per-pass 100)
  start=$(date +%s.%N)
  $L "${args[@]}" --output "$D/expected.npy" | grep -E 'layout|generations|population'
  full=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  echo "uninterrupted: $full s"
  ok=0; tries=${KILL_TRIES:-10}
  for i in $(seq 1 "$tries"); do
    for k in 1 2; do
      $L "${args[@]}" --output "$D/killed.npy" >/dev/null 2>&1 &
      pid=$!
      sleep "$(awk -v f="$full" -v r=$((RANDOM % 1000)) 'BEGIN { printf "%.3f", f * r / 1000 }')"
      kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    done
    $L "${args[@]}" --output "$D/killed.npy" | grep -E 'resuming|already' || echo "started over"
    if cmp -s "$D/expected.npy" "$D/killed.npy"; then ok=$((ok + 1)); else echo "DIFFERENT after try $i"; fi
    rm -f "$D/killed.npy"
  done
  echo "kill tries: $ok of $tries identical"
  ls -a "$D"
  rm -f "$D"/*.npy
fi

if want forced; then
  step "262144^2 x 2048: --gpu-memory 2GiB (bands) against held in GPU memory"
  $L run --rule B3/S23 --size 262144 --gens 2048 --backend gpu --output "$D/whole.npy"
  $L run --rule B3/S23 --size 262144 --gens 2048 --backend gpu --gpu-memory 2GiB --output "$D/bands.npy"
  same "$D/whole.npy" "$D/bands.npy" "262144^2 x 2048: bands vs whole"
  rm -f "$D"/*.npy
fi

if want big; then
  step "disk: write and read 8 GiB with fsync / O_DIRECT"
  dd if=/dev/zero of="$D/dd.bin" bs=64M count=128 conv=fsync 2>&1 | tail -1
  sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || echo "(cannot drop caches)"
  dd if="$D/dd.bin" of=/dev/null bs=64M iflag=direct 2>&1 | tail -1
  rm -f "$D/dd.bin"
  size=${BIG_SIZE:-393216}; gens=${BIG_GENS:-4096}
  step "soup ${size}^2 straight to a universe file"
  $L run --size "$size" --gens 0 --output "$D/soup.npy" | grep -E 'layout|generations|time|error'
  ls -l "$D/soup.npy"
  sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
  step "out of core: ${size}^2 x $gens from the soup file to a new file, on the GPU"
  $L run --input "$D/soup.npy" --gens "$gens" --backend gpu --output "$D/out.npy"
  ls -l "$D"
  rm -f "$D"/*.npy
fi
rm -rf "$D"
