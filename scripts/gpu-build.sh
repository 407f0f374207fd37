#!/usr/bin/env bash
# Builds the release binary and the GPU-relevant test binaries (TESTS, default all) into G
# (default .gpu/) for the scripts/gpu-*.sh checks.
set -eu
cargo build --release
G=${G:-.gpu}
mkdir -p $G
cp target/release/lifegen $G/
for t in ${TESTS:-gpu gpu_bands backends gpu_ltl map_rules generations plane topologies}; do
  exe=$(cargo test --release --no-run --test $t --message-format=json 2>/dev/null \
    | grep "\"kind\":\[\"test\"\]" | grep "\"name\":\"$t\"" \
    | grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4)
  cp "$exe" $G/test-$t
done
cargo build --release -p lifegen-gen --example on_demand_search
cp target/release/examples/on_demand_search $G/
strip $G/*
ls -la $G
