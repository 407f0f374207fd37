#!/usr/bin/env bash
# Larger-than-Life on the CPU: lifegen's CPU backend (one thread, then all threads) against the
# plain one-thread summed-area C loop (benches/c/ltl_summed_area.c), for one rule or for the whole
# CAT suite (benchmarks/cat-suite.txt, the CAT paper's Table VI).
# Usage: scripts/ltl-cpu-compare.sh [--rule RULE] [--size WxH] [--gens N] [--runs N] [--suite]
#   --rule   default R16,C0,M0,S170..296,B170..300,NM
#   --size   default 2048x2048
#   --gens   default 3000 (about 5 s of the C loop at 2048x2048 on a 2 GHz+ core)
#   --runs   timed runs of each (default 3); lifegen's is the median of its runs, the C loop's too
#   --density  density of the population check's soup (default: the rule's CAT-suite density
#              when the rule is in benchmarks/cat-suite.txt, else 0.5)
#   --suite  every rule of benchmarks/cat-suite.txt instead of --rule
# lifegen bench always starts from a density 0.5 seed 1 soup, so the C loop is timed on the same
# soup. Then `lifegen run` (all threads) repeats the C loop's run from the same soup (the C loop
# draws lifegen's soup), and the two populations must agree; that check starts from the CAT
# paper's density where the rule has one, since many of these rules kill a density 0.5 soup at once. Exits 1 if any
# population disagrees.
# Keep a run with: scripts/ltl-cpu-compare.sh | tee benchmarks/ltl-cpu-compare-$(git rev-parse --short HEAD).log
set -eu
rule='R16,C0,M0,S170..296,B170..300,NM'
size=2048x2048
gens=3000
runs=3
suite=0
density=''
while [ $# -gt 0 ]; do
  case $1 in
    --rule) rule=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --gens) gens=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --density) density=$2; shift 2 ;;
    --suite) suite=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
w=${size%x*}; h=${size#*x}
bin=target/release/lifegen
c=target/ltl_summed_area
mkdir -p target
gcc -O3 -march=native -o $c benches/c/ltl_summed_area.c
cargo build --release --quiet
dirty=''
git diff --quiet HEAD -- || dirty=' (plus uncommitted changes)'
echo "== commit $(git rev-parse --short HEAD)$dirty, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) threads, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "== ${w}x${h} torus, $gens generations, $runs runs of each"

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3g", a / b }'; }
mismatches=0
summary=()

# compare RULE CHECK_DENSITY: time the C loop and lifegen bench on the density 0.5 seed 1 soup,
# then check the populations after $gens generations from a CHECK_DENSITY seed 1 soup.
compare() {
  local rule=$1 density=$2 out rates='' rate_c rate_1 rate_n pop_c pop_l verdict=agree
  echo "== plain summed-area C loop (gcc -O3 -march=native), 1 thread, $rule"
  for run in $(seq "$runs"); do
    out=$($c "$rule" "$w" "$h" "$gens" 0.5 1)
    echo "run $run: $(echo "$out" | grep -E '^generations|^population|cell updates' | paste -sd ' ')"
    rates="$rates $(echo "$out" | sed -n 's/^cell updates\/s: //p')"
  done
  rate_c=$(echo $rates | tr ' ' '\n' | median)
  echo "cell updates/s: $rate_c (median of $runs)"
  echo "== lifegen, 1 thread"
  out=$($bin bench --backend cpu --rule "$rule" --size "${w}x${h}" --gens "$gens" --runs "$runs" --threads 1)
  echo "$out" | grep -E '^backend|^run|^population|cell updates/s:'
  if echo "$out" | grep -qx 'population: 0'; then
    echo "(note: the density 0.5 soup died out; lifegen's rate is on an empty universe from then on)"
  fi
  rate_1=$(echo "$out" | sed -n 's/^cell updates\/s: //p')
  echo "== lifegen, all threads"
  out=$($bin bench --backend cpu --rule "$rule" --size "${w}x${h}" --gens "$gens" --runs "$runs")
  echo "$out" | grep -E '^backend|^run|^population|cell updates/s:'
  rate_n=$(echo "$out" | sed -n 's/^cell updates\/s: //p')
  echo "== lifegen/C: $(ratio "$rate_1" "$rate_c") (1 thread), $(ratio "$rate_n" "$rate_c") (all threads)"
  echo "== population check: $gens generations from a density $density seed 1 soup, C loop and lifegen run (all threads)"
  pop_c=$($c "$rule" "$w" "$h" "$gens" "$density" 1 | sed -n 's/^population: //p')
  pop_l=$($bin run --backend cpu --rule "$rule" --size "${w}x${h}" --gens "$gens" --density "$density" --seed 1 |
    sed -n 's/^population: //p')
  if [ "$pop_c" != "$pop_l" ]; then verdict=MISMATCH; mismatches=$((mismatches + 1)); fi
  echo "population: C $pop_c, lifegen $pop_l: $verdict"
  summary+=("$(printf '%-36s %10s %10s %11s %8s %8s  %s' "$rule" "$rate_c" "$rate_1" "$rate_n" \
    "$(ratio "$rate_1" "$rate_c")" "$(ratio "$rate_n" "$rate_c")" "$verdict ($pop_c)")")
}

if [ $suite = 1 ]; then
  density_override=$density
  while read -r r suite_rule density _; do
    case $r in ''|'#'*) continue ;; esac
    echo
    echo "==== CAT suite r=$r, paper density $density"
    compare "$suite_rule" "${density_override:-$density}"
  done < benchmarks/cat-suite.txt
else
  if [ -z "$density" ]; then
    # The rule's density in the suite, comparing rules with C0 read as C2 (both are two states).
    density=$(awk -v rule="${rule/,C0,/,C2,}" '$1 !~ /^#/ && $2 == rule { print $3 }' benchmarks/cat-suite.txt | head -1)
    density=${density:-0.5}
  fi
  compare "$rule" "$density"
fi
echo
echo "== summary, cell updates/s (${w}x${h}, $gens generations)"
printf '%-36s %10s %10s %11s %8s %8s  %s\n' rule "C 1 thread" "lifegen 1" "lifegen all" "1/C" "all/C" population
printf '%s\n' "${summary[@]}"
[ $mismatches = 0 ] || { echo "$mismatches population mismatches" >&2; exit 1; }
