#!/usr/bin/env bash
# Writes link/hot-functions.txt: the functions lifegen's runs execute, which build.rs asks LLD to
# lay out first in the binary, so that a run touches few pages of its code (the kernel maps 64 KiB
# around each page first executed: a small run's peak memory was mostly its code's pages).
#
#   PATTERNS=/tmp/golly/Patterns scripts/hot-functions.sh
#
# Needs perf and Golly's Patterns folder. First the functions sampled (perf at 50 kHz) over short
# runs of each kind (HashLife, the tiles, macrocell files, Generations, writing RLE), then rounds
# that relink with the list so far and add the functions whose page faults remain. Symbols are
# mangled the v0 way (.cargo/config.toml): a name carries its crate's stable id and its path,
# so edits to the code keep the list (1006 of 1012 names after a change to the runtime crate;
# with the legacy names' hash of the crate's build, 408 of 1036 and a small run's peak 6.2 MB
# for 4.4). A list made with another toolchain or other dependency versions, or functions
# renamed, moved or made generic, lose their place (nothing breaks): rerun it after such
# changes and compare a small run's peak (`/usr/bin/time -f %M`).
set -euo pipefail
cd "$(dirname "$0")/.."
patterns=${PATTERNS:-/tmp/golly/Patterns}
rounds=${ROUNDS:-5}
list=link/hot-functions.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

runs() {
    local lifegen=$1 times=$2
    for _ in $(seq "$times"); do
        "$lifegen" run --input "$patterns/Life/Methuselahs/acorn.lif" --gens 1000
        "$lifegen" run --input "$patterns/Life/Breeders/spacefiller.rle" --gens 100000
        "$lifegen" run --input "$patterns/Life/Guns/period-52-glider-gun.rle" --gens 0
        "$lifegen" run --input "$patterns/HashLife/Eventful/ruler.mc" --gens 1000
        "$lifegen" run --input "$patterns/HashLife/Metacell/metapixel-galaxy.mc.gz" --gens 100
        "$lifegen" run --input "$patterns/Life/Puffers/puffer-train.rle" --gens 1000 \
            --output "$work/out.rle"
        "$lifegen" run --input "$patterns/Life/Methuselahs/rabbits.lif" --gens 1000 --algo tiles
        "$lifegen" run --input "$patterns/Generations/banner.rle" --gens 1000
    done >/dev/null
}

# The mangled names of lifegen's own functions among perf's samples in $1.
functions_sampled() {
    perf report -i "$1" --stdio --no-children --comm lifegen --dso lifegen --no-demangle \
        --sort sym 2>/dev/null | awk '/^ +[0-9]/ { print $3 }'
}

build() {
    {
        echo "# The functions lifegen's runs execute, laid out first by the linker (build.rs)."
        echo "# Written by scripts/hot-functions.sh; $(wc -l < "$work/functions") functions."
        cat "$work/functions"
    } > "$list"
    cargo build --release --quiet
    cp target/release/lifegen "$work/lifegen"
}

: > "$work/functions"
build
perf record -q -F 49999 -o "$work/samples.data" -- bash -c "$(declare -f runs); patterns=$patterns work=$work; runs $work/lifegen 25"
functions_sampled "$work/samples.data" > "$work/functions"
echo "sampled: $(wc -l < "$work/functions") functions"
for round in $(seq "$rounds"); do
    build
    perf record -q -e page-faults -c 1 -o "$work/faults.data" -- bash -c "$(declare -f runs); patterns=$patterns work=$work; runs $work/lifegen 2"
    before=$(wc -l < "$work/functions")
    functions_sampled "$work/faults.data" >> "$work/functions"
    awk '!seen[$0]++' "$work/functions" > "$work/deduplicated"
    mv "$work/deduplicated" "$work/functions"
    echo "round $round: $before -> $(wc -l < "$work/functions") functions; a small run's peak:" \
        "$( { /usr/bin/time -f '%M KiB' "$work/lifegen" run --input "$patterns/Life/Breeders/spacefiller.rle" --gens 1000 >/dev/null; } 2>&1 )"
done
build
echo "wrote $list"
