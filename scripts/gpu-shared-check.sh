#!/usr/bin/env bash
# Shared machines (issue 32) on a host of several GPUs: concurrent runs on one GPU, SIGTERM at
# random moments of GPU runs (held whole, bands over two GPUs, out of core) and their resume, CPU
# thread scaling, and the README's run on every GPU against one.
# Expects .gpu/lifegen (this build) and, for the same-call baselines, .gpu/lifegen-old (the
# commit before); writes ${OUT:-.}/gpu-shared-check.log. PARTS="concurrent term threads readme plane"
# (plane: patterns on the unbounded plane, GPU against CPU); MODES picks among the SIGTERM runs
# (held-whole|bands|out-of-core). ceiling: T one-thread benches at once (each universe in cache),
# the rate the cores give together against T times one alone, and the thread benches at several
# generations a pass (LIFEGEN_CPU_GENS_PER_PASS).
set -u
parts=${PARTS:-concurrent term threads readme plane}
log=${OUT:-.}/gpu-shared-check.log
exec > >(tee "$log") 2>&1
L=$PWD/.gpu/lifegen
OLD=$PWD/.gpu/lifegen-old
step() { echo; echo "=== $* ($(date +%T))"; }
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
D=/tmp/shared-scratch
mkdir -p "$D"
R=$PWD
cd "$D" || exit 1

step device
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)|Thread\(s\)"

if want concurrent; then
  M=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
  # Two copies of S^2 bits each: two runs fit on the card, three do not.
  S=$([ "$M" -gt 100000 ] && echo 524288 || echo 393216)
  step "one run alone on GPU 0 at ${S}^2"
  CUDA_VISIBLE_DEVICES=0 $L run --backend gpu --size ${S}x${S} --gens 200 | grep -E "population|cell updates"
  for n in 2 3; do
    step "$n runs at once on GPU 0 at ${S}^2"
    start=$(date +%s%N)
    pids=""
    for i in $(seq $n); do
      (CUDA_VISIBLE_DEVICES=0 timeout -s KILL 200 $L run --backend gpu --size ${S}x${S} --gens 200 > run$i.txt 2>&1
       echo "rc=$? after $(( ($(date +%s%N) - start) / 1000000 )) ms" >> run$i.txt) &
      pids="$pids $!"
    done
    # Not a bare wait: it would wait for the log's tee as well.
    wait $pids
    for i in $(seq $n); do echo "--- run $i"; grep -E "population|cell updates|error|rc=" run$i.txt | cut -c1-400; done
  done
fi

if want term; then
  # Each: a run into a universe file, killed with SIGTERM at a random moment, then run again
  # to the end; the file must equal the same run never killed.
  while read -r name opts; do
    step "SIGTERM at random moments: $name ($opts)"
    rm -f ref.npy
    $L run $opts --output ref.npy | grep -E "backend|layout|population|error" | cut -c1-200
    ok=0
    for trial in $(seq 10); do
      rm -f run.npy
      $L run $opts --output run.npy > term.txt 2>&1 &
      pid=$!
      sleep "$(awk -v s=$RANDOM 'BEGIN { printf "%.2f", 0.5 + (s % 250) / 100 }')"
      sent=$(date +%s%N)
      kill -TERM $pid
      wait $pid
      rc=$?
      took=$(( ($(date +%s%N) - sent) / 1000000 ))
      left=$(ls -a | grep -c 'lifegen\|partial' || true)
      $L run $opts --output run.npy > resume.txt 2>&1
      if cmp -s ref.npy run.npy; then same=IDENTICAL; ok=$((ok + 1)); else same=DIFFERENT; fi
      echo "trial $trial: rc=$rc exit $took ms after SIGTERM; temporary files left: $left; resumed: $same; $(grep -E '^error' term.txt | cut -c1-160)"
    done
    echo "$name: $ok of 10 identical after SIGTERM and resume"
  done < <(grep -E "^(${MODES:-held-whole|bands|out-of-core}) " <<'EOF'
held-whole --backend gpu --size 32768 --gens 100000 --checkpoint-every 1
bands --backend gpu --gpus 2 --size 32768 --gens 100000 --checkpoint-every 1
out-of-core --backend gpu --gpus 1 --size 131072 --gens 2000 --gpu-memory 1GiB
EOF
)
  rm -f ref.npy run.npy
fi

if want threads; then
  step "CPU threads: the same cells at every thread count (this build, AVX-512 modules here)"
  for rule in B3/S23 R16,C0,M0,S170..296,B170..300,NM; do
    for b in "cpu --threads 1" "cpu --threads 7" "cpu --threads 64" reference; do
      echo "$rule $b: $($L run --rule $rule --density 0.3 --size 1024x1100 --gens 4 --backend $b | grep population)"
    done
  done
  for bin in "$OLD" "$L"; do
    [ -x "$bin" ] || continue
    step "CPU threads: $(basename $bin)"
    for T in 1 4 16 32 64 default; do
      t=$([ $T = default ] || echo "--threads $T")
      echo "T=$T life $($bin bench --backend cpu --rule B3/S23 --size 16384 --gens 256 --runs 5 $t | grep -E '^cell updates')"
      echo "T=$T r16 $($bin bench --backend cpu --rule R16,C0,M0,S170..296,B170..300,NM --size 4096 --gens 16 --runs 5 $t | grep -E '^cell updates')"
    done
  done
fi

if want ceiling; then
  step "the cores' own ceiling: T one-thread processes at once, 2048^2 x 2048 each (in cache)"
  for T in 1 16 32 64; do
    pids=""
    for i in $(seq $T); do
      ($L bench --backend cpu --rule B3/S23 --size 2048 --gens 2048 --runs 3 --threads 1 | grep '^cell updates' | awk '{print $3}' > c$i.txt) &
      pids="$pids $!"
    done
    # Not a bare wait: that waits for the tee of this script's own output too.
    wait $pids
    cat $(seq -f c%g.txt $T) | awk -v T=$T '{s+=$1} END {printf "T=%d together %.3e, per process %.3e\n", T, s, s/T}'
    rm -f c*.txt
  done
  step "Life 16384^2 x 256 and 32768^2 x 256 at 1 and 32 threads, by generations a pass"
  for g in 4 8 16 32; do
    for size in 16384 32768; do
      for T in 1 32; do
        echo "gens/pass=$g size=$size T=$T $(LIFEGEN_CPU_GENS_PER_PASS=$g $L bench --backend cpu --rule B3/S23 --size $size --gens 256 --runs 3 --threads $T | grep -E '^cell updates')"
      done
    done
  done
  step "R16 NM at 1 and 32 threads by size"
  for size in 4096 8192 16384; do
    for T in 1 32; do
      echo "size=$size T=$T $($L bench --backend cpu --rule R16,C0,M0,S170..296,B170..300,NM --size $size --gens 16 --runs 3 --threads $T | grep -E '^cell updates')"
    done
  done
fi
if want readme; then
  for bin in "$OLD" "$L"; do
    [ -x "$bin" ] || continue
    step "README run on this host: $(basename $bin)"
    for i in 1 2; do /usr/bin/time -f "wall %e s" $bin run 2>&1 | grep -E "^gpus|^backend|wall" | cut -c1-160; done
    CUDA_VISIBLE_DEVICES=0 /usr/bin/time -f "one GPU visible: wall %e s" $bin run 2>&1 | grep wall
  done
fi

if want plane; then
  step "the unbounded plane: GPU against CPU"
  for f in "$R"/tests/data/gosper_glider_gun.rle "$R"/tests/data/ltl_disc.rle "$R"/tests/data/glider_cxrle.rle; do
    for b in cpu gpu; do $L run --input "$f" --gens 1000 --backend $b --output plane-$b.rle | grep -E "^backend|^live" | cut -c1-200; done
    if cmp -s plane-cpu.rle plane-gpu.rle; then echo "IDENTICAL $(basename $f)"; else echo "DIFFERENT $(basename $f)"; fi
  done
fi
