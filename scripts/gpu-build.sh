#!/usr/bin/env bash
# Builds the release binary and the GPU-relevant test binaries into .gpu/ for scripts/gpu-check.sh.
set -eu
cargo build --release
mkdir -p .gpu
cp target/release/lifegen .gpu/
for t in gpu gpu_bands backends gpu_ltl map_rules generations plane; do
  exe=$(cargo test --release --no-run --test $t --message-format=json 2>/dev/null \
    | grep "\"kind\":\[\"test\"\]" | grep "\"name\":\"$t\"" \
    | grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4)
  cp "$exe" .gpu/test-$t
done
cargo build --release -p lifegen-gen --example on_demand_search
cp target/release/examples/on_demand_search .gpu/
strip .gpu/*
ls -la .gpu
